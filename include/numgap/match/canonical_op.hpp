#pragma once
// numgap::canonical_op(op): the operator family an op type string belongs to,
// so that spellings from different frameworks compare equal:
// "aten::conv2d", "aten.convolution.default", "Conv", "CONV_2D",
// "QLinearConv", "quantized::conv2d" all give "conv".
// numgap::op_families(op): the canonical family of the whole string followed,
// for a fused name of two or more parts, by the families of its parts in
// order (repeats kept: "add+add" has two parts), for fused op names ("conv+bn+relu",
// "conv_bn_relu", "quantized::linear_relu" -> {..., "conv"/"matmul",
// "batchnorm", "relu"}).
//
// Rules: lower-case; drop namespaces ("aten::", "quantized::", "aten.",
// "torch.ops.", "module:" before a torch.nn class name) and overload suffixes (".default", ".Tensor"); drop '_', '-'
// and spaces; drop quantization/fusion prefixes ("qlinear", "quantized",
// "fused"); map aliases to a family name (table below). An op not in the
// table is its own family (its cleaned spelling). The empty string stays
// empty ("unknown op").
// O(length of op); allocates the returned strings; never throws except
// std::bad_alloc.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numgap {
namespace detail {

struct op_alias {
    std::string_view alias;
    std::string_view family;
};

// Sorted by alias (checked by a test) for binary search.
inline constexpr std::array<op_alias, 161> op_alias_table{{
    {"abs", "abs"}, {"adaptiveavgpool1d", "avgpool"}, {"adaptiveavgpool2d", "avgpool"},
    {"adaptiveavgpool3d", "avgpool"}, {"adaptivemaxpool1d", "maxpool"}, {"adaptivemaxpool2d", "maxpool"},
    {"add", "add"}, {"addmm", "matmul"}, {"addv2", "add"}, {"alias", "identity"}, {"aliascopy", "identity"},
    {"amax", "max"}, {"amin", "min"}, {"averagepool", "avgpool"}, {"averagepool2d", "avgpool"},
    {"avgpool", "avgpool"}, {"avgpool1d", "avgpool"}, {"avgpool2d", "avgpool"}, {"avgpool3d", "avgpool"},
    {"batchmatmul", "matmul"}, {"batchmatmulv2", "matmul"}, {"batchnorm", "batchnorm"}, {"batchnorm1d", "batchnorm"},
    {"batchnorm2d", "batchnorm"}, {"batchnorm3d", "batchnorm"}, {"batchnormalization", "batchnorm"},
    {"bmm", "matmul"}, {"bn", "batchnorm"}, {"cast", "cast"}, {"cat", "concat"}, {"clamp", "clip"}, {"clip", "clip"},
    {"clone", "identity"}, {"concat", "concat"}, {"concatenation", "concat"}, {"concatv2", "concat"},
    {"contiguous", "identity"}, {"conv", "conv"}, {"conv1d", "conv"}, {"conv2d", "conv"}, {"conv3d", "conv"},
    {"convinteger", "conv"}, {"convolution", "conv"}, {"convrelu", "conv"}, {"copy", "identity"}, {"dense", "matmul"},
    {"depthwiseconv", "conv"}, {"depthwiseconv2d", "conv"}, {"depthwiseconv2dnative", "conv"},
    {"dequantize", "dequantize"}, {"dequantizelinear", "dequantize"}, {"dequantizeperchannel", "dequantize"},
    {"dequantizepertensor", "dequantize"}, {"detach", "identity"}, {"detachcopy", "identity"}, {"div", "div"},
    {"divide", "div"}, {"dropout", "identity"}, {"dropout1d", "identity"}, {"dropout2d", "identity"},
    {"dropout3d", "identity"}, {"elementwiseadd", "add"}, {"elementwisemul", "mul"}, {"embedding", "embedding"},
    {"embeddinglookup", "embedding"}, {"erf", "erf"}, {"exp", "exp"}, {"expand", "reshape"}, {"expandas", "reshape"},
    {"expandcopy", "reshape"}, {"expanddims", "reshape"}, {"fastgelu", "gelu"}, {"flatten", "reshape"},
    {"fullyconnected", "matmul"}, {"fusedbatchnorm", "batchnorm"}, {"fusedbatchnormv3", "batchnorm"},
    {"gelu", "gelu"}, {"gemm", "matmul"}, {"globalaveragepool", "avgpool"}, {"hardsigmoid", "hardsigmoid"},
    {"hardswish", "hardswish"}, {"hardtanh", "clip"}, {"identity", "identity"}, {"innerproduct", "matmul"},
    {"layernorm", "layernorm"}, {"layernormalization", "layernorm"}, {"leakyrelu", "leakyrelu"},
    {"liftfresh", "identity"}, {"liftfreshcopy", "identity"}, {"linear", "matmul"}, {"log", "log"},
    {"logsoftmax", "logsoftmax"}, {"matmul", "matmul"}, {"matmulinteger", "matmul"}, {"max", "max"},
    {"maximum", "max"}, {"maxpool", "maxpool"}, {"maxpool1d", "maxpool"}, {"maxpool2d", "maxpool"},
    {"maxpool2dwithindices", "maxpool"}, {"maxpool3d", "maxpool"}, {"mean", "mean"}, {"min", "min"},
    {"minimum", "min"}, {"mm", "matmul"}, {"mul", "mul"}, {"multiply", "mul"}, {"nativebatchnorm", "batchnorm"},
    {"nativebatchnormlegit", "batchnorm"}, {"nativebatchnormlegitfunctional", "batchnorm"},
    {"nativebatchnormlegitnotraining", "batchnorm"}, {"nativelayernorm", "layernorm"}, {"neg", "neg"},
    {"numpyt", "transpose"}, {"permute", "transpose"}, {"permutecopy", "transpose"}, {"pow", "pow"},
    {"quantize", "quantize"}, {"quantizelinear", "quantize"}, {"quantizeperchannel", "quantize"},
    {"quantizepertensor", "quantize"}, {"reciprocal", "reciprocal"}, {"reducemax", "max"}, {"reducemean", "mean"},
    {"reducemin", "min"}, {"reducesum", "sum"}, {"relu", "relu"}, {"relu6", "clip"}, {"requantize", "quantize"},
    {"reshape", "reshape"}, {"reshapealias", "reshape"}, {"rmsnorm", "rmsnorm"}, {"rsqrt", "rsqrt"},
    {"sigmoid", "sigmoid"}, {"silu", "silu"}, {"softmax", "softmax"}, {"sqrt", "sqrt"}, {"square", "pow"},
    {"squeeze", "reshape"}, {"squeezecopy", "reshape"}, {"sub", "sub"}, {"subtract", "sub"}, {"sum", "sum"},
    {"swish", "silu"}, {"t", "transpose"}, {"tanh", "tanh"}, {"tcopy", "transpose"}, {"to", "cast"},
    {"tocopy", "cast"}, {"todtype", "cast"}, {"transpose", "transpose"}, {"transposecopy", "transpose"},
    {"typeas", "cast"}, {"unflatten", "reshape"}, {"unsafeview", "reshape"}, {"unsqueeze", "reshape"},
    {"unsqueezecopy", "reshape"}, {"var", "var"}, {"view", "reshape"}, {"viewas", "reshape"}, {"viewcopy", "reshape"}
}};

inline std::string_view family_of_cleaned(std::string_view cleaned) {
    auto it = std::lower_bound(op_alias_table.begin(), op_alias_table.end(), cleaned,
                               [](const op_alias& entry, std::string_view key) { return entry.alias < key; });
    if (it != op_alias_table.end() && it->alias == cleaned) return it->family;
    return cleaned;
}

inline bool is_known_op(std::string_view cleaned) {
    auto it = std::lower_bound(op_alias_table.begin(), op_alias_table.end(), cleaned,
                               [](const op_alias& entry, std::string_view key) { return entry.alias < key; });
    return it != op_alias_table.end() && it->alias == cleaned;
}

inline bool is_overload_suffix(std::string_view part) {
    static constexpr std::array<std::string_view, 18> suffixes{
        "default", "tensor", "scalar", "int", "self", "out", "dim", "dims", "input", "using_ints", "dtype",
        "dtype_layout", "device", "tensor_scalar", "tensor_tensor", "scalar_tensor", "dim_intlist", "intlist"};
    return std::find(suffixes.begin(), suffixes.end(), part) != suffixes.end();
}

// Lower-cased op without namespaces and overload suffixes, separators kept.
inline std::string strip_op_decorations(std::string_view op) {
    std::string lower(op);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto colons = lower.rfind("::"); colons != std::string::npos) lower.erase(0, colons + 2);
    // Module calls as examples/torch_capture.py --level module writes them:
    // "module:" and the torch.nn class ("module:Conv2d", "module:ReLU").
    if (lower.starts_with("module:")) lower.erase(0, 7);
    // Dotted names: "aten.add.tensor", "torch.ops.aten.relu.default".
    std::vector<std::string_view> parts;
    std::string_view rest(lower);
    while (true) {
        auto dot = rest.find('.');
        parts.push_back(rest.substr(0, dot));
        if (dot == std::string_view::npos) break;
        rest.remove_prefix(dot + 1);
    }
    static constexpr std::array<std::string_view, 9> namespaces{
        "aten", "torch", "ops", "prims", "quantized", "onnx", "ai", "tfl", "nn"};
    std::size_t first = 0;
    while (first + 1 < parts.size() &&
           std::find(namespaces.begin(), namespaces.end(), parts[first]) != namespaces.end())
        ++first;
    std::size_t last = parts.size();
    while (last > first + 1 && is_overload_suffix(parts[last - 1])) --last;
    // What remains is e.g. "functional.relu": the op is the last part.
    return std::string(parts[last - 1]);
}

inline std::string clean_op_token(std::string_view token) {
    std::string cleaned;
    for (char c : token)
        if (c != '_' && c != '-' && c != ' ') cleaned.push_back(c);
    for (std::string_view prefix : {std::string_view("qlinear"), std::string_view("quantized"),
                                    std::string_view("fused")}) {
        if (cleaned.size() > prefix.size() && cleaned.starts_with(prefix) &&
            family_of_cleaned(cleaned) == std::string_view(cleaned)) {
            cleaned.erase(0, prefix.size());
        }
    }
    return cleaned;
}

// Whether a canonical family is one the table knows (an op "nothing
// recognises" is its own family, outside the table).
inline bool is_known_family(std::string_view family) {
    return std::any_of(op_alias_table.begin(), op_alias_table.end(),
                       [&](const op_alias& entry) { return entry.family == family; });
}

} // namespace detail

inline std::string canonical_op(std::string_view op) {
    if (op.empty()) return {};
    std::string cleaned = detail::clean_op_token(detail::strip_op_decorations(op));
    return std::string(detail::family_of_cleaned(cleaned));
}

inline std::vector<std::string> op_families(std::string_view op) {
    std::vector<std::string> families;
    if (op.empty()) return families;
    const std::string stripped = detail::strip_op_decorations(op);
    families.push_back(std::string(detail::family_of_cleaned(detail::clean_op_token(stripped))));
    std::vector<std::string_view> tokens;
    std::string_view rest(stripped);
    while (!rest.empty()) {
        auto separator = rest.find_first_of("+|_-/ ");
        if (separator != 0) tokens.push_back(rest.substr(0, separator));
        if (separator == std::string_view::npos) break;
        rest.remove_prefix(separator + 1);
    }
    if (tokens.size() < 2) return families;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        // "batch_norm", "layer_norm", "fully_connected" span two tokens, at
        // least one of which is no op by itself ("conv_relu" is two ops).
        if (i + 1 < tokens.size()) {
            const std::string joined = detail::clean_op_token(std::string(tokens[i]) + std::string(tokens[i + 1]));
            const bool both_ops = detail::is_known_op(detail::clean_op_token(tokens[i])) &&
                                  detail::is_known_op(detail::clean_op_token(tokens[i + 1]));
            if (!both_ops && detail::is_known_op(joined)) {
                families.push_back(std::string(detail::family_of_cleaned(joined)));
                ++i;
                continue;
            }
        }
        const std::string cleaned = detail::clean_op_token(tokens[i]);
        if (!cleaned.empty()) families.push_back(std::string(detail::family_of_cleaned(cleaned)));
    }
    if (families.size() < 3) families.resize(1); // one part: not a fused name ("batch_norm")
    // A known op spelled in several words, some of which are no op
    // ("_native_batch_norm_legit_no_training"), is one op, not a fusion.
    const bool whole_is_known = detail::is_known_op(detail::clean_op_token(stripped));
    if (whole_is_known && std::any_of(tokens.begin(), tokens.end(), [](std::string_view token) {
            return !detail::is_known_op(detail::clean_op_token(token));
        }))
        families.resize(1);
    return families;
}

} // namespace numgap
