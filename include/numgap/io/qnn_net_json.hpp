#pragma once
// numgap::io::read_qnn_net_json: the per-tensor descriptions in the model JSON
// the QNN converters write next to the model (qnn-onnx-converter's
// `<model>_net.json`), used to give the headerless files of a QNN raw output
// folder (qnn_raw_source.hpp) their dtype, shape, layout and quantization.
//
// What is read (everything else in the file is ignored):
//   {"graph": {"tensors": {"<name>": {"dims": [1, 56, 56, 64],
//                                     "data_type": 1032,
//                                     "axis_format": "NHWC",
//                                     "quant_params": {"scale_offset": {"scale": 0.0235, "offset": -128}}}}}}
//  - "dims": the stored shape (QNN stores in axis_format's order), at most
//    max_rank entries, each a non-negative integer, their byte size below 2^63.
//  - "data_type": the Qnn_DataType_t code, an integer (1032 = 0x0408) or its
//    name as a string ("QNN_DATATYPE_UFIXED_POINT_8"). Supported: INT_8/16/32,
//    UINT_8/16, FLOAT_16/32, SFIXED_POINT_8/16/32 (int8/16/32), UFIXED_POINT_8/16
//    (uint8/16), BOOL_8. Others are an error naming the tensor and the code.
//  - "axis_format": "NHWC" (rank 4) and "NDHWC" (rank 5) are channels-last
//    storage of an NCHW / NCDHW reference: axis_order [0, 2, 3, 1] /
//    [0, 2, 3, 4, 1]. Any other value (NCHW, NF, NC, ANY, ...) or a rank that
//    does not fit keeps the stored order.
//  - "quant_params": read for fixed-point types only. QNN's convention is
//    real = scale * (q + offset), so numgap's zero point
//    (real = scale * (q - zero_point)) is -offset. The form is the member
//    that "encoding" (a Qnn_QuantizationEncoding_t code or its name) names,
//    else the first of these present:
//      "scale_offset" / "bw_scale_offset" (codes 0 / 2): {"scale", "offset"},
//        per tensor; a scale of 0 (what QNN writes for "none") is no
//        quantization;
//      "axis_scale_offset" (1): {"axis", "scale_offsets": [{"scale",
//        "offset"}, ...]} (the list may be named "bw_scale_offset"), one per
//        index of stored dimension "axis";
//      "bw_axis_scale_offset" (3): {"axis", "scales": [...], "offsets": [...]}.
//    "bitwidth" and the other members are not needed to dequantize and are
//    not read. A per-axis "axis" must be a stored dimension and the list as
//    long as that dimension (and as "num_scale_offsets"/"num_elements" when
//    given); per-axis scales must be finite and positive (all 0 is no
//    quantization).
//    Block forms ("block", "blockwise_expansion" i.e. LPBQ, "vector", codes
//    4-6, and unknown codes) cannot be represented by numgap::quantization:
//    the tensor's unsupported_encoding says so and the raw source refuses to
//    read its integers (a dequantized float32 file is still read).
//  - An unsupported "data_type" (an integer or name not in the table) does
//    not fail the file (a model JSON lists every weight too): that tensor's
//    unsupported_type says why, and the raw source refuses to read it.
// Trust: the file is parsed by io/json (depth limited to 64 here); a member
// of the wrong type, a negative or over-long "dims", a per-axis encoding that
// does not fit the dims is an error (kind schema) naming the file,
// line:column and the tensor.
// Complexity: O(file size).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/io/json.hpp>

namespace numgap::io {

struct qnn_tensor_description {
    dtype type = dtype::float32;
    bool fixed_point = false; // a quantized QNN type: dequantized float32 outputs are also accepted
    std::vector<std::int64_t> dims;
    std::optional<std::vector<int>> axis_order;
    std::optional<float> scale; // per tensor
    std::int32_t zero_point = 0;
    // Per axis (quant_axis >= 0): one scale and zero point per index of
    // stored dimension quant_axis.
    int quant_axis = -1;
    std::vector<float> axis_scales;
    std::vector<std::int32_t> axis_zero_points;
    // Why the stored values cannot be read as described, one sentence; empty
    // when they can. A type numgap does not read (`type` is then meaningless):
    std::string unsupported_type;
    // A quantization numgap cannot represent (block forms): the integers are
    // readable but would be compared undequantized.
    std::string unsupported_encoding;
};

namespace detail {

struct qnn_data_type {
    std::uint32_t code;
    std::string_view name;
    dtype type;
    bool fixed_point;
};

inline constexpr qnn_data_type qnn_data_types[] = {
    {0x0008, "QNN_DATATYPE_INT_8", dtype::int8, false},
    {0x0016, "QNN_DATATYPE_INT_16", dtype::int16, false},
    {0x0032, "QNN_DATATYPE_INT_32", dtype::int32, false},
    {0x0108, "QNN_DATATYPE_UINT_8", dtype::uint8, false},
    {0x0116, "QNN_DATATYPE_UINT_16", dtype::uint16, false},
    {0x0216, "QNN_DATATYPE_FLOAT_16", dtype::float16, false},
    {0x0232, "QNN_DATATYPE_FLOAT_32", dtype::float32, false},
    {0x0308, "QNN_DATATYPE_SFIXED_POINT_8", dtype::int8, true},
    {0x0316, "QNN_DATATYPE_SFIXED_POINT_16", dtype::int16, true},
    {0x0332, "QNN_DATATYPE_SFIXED_POINT_32", dtype::int32, true},
    {0x0408, "QNN_DATATYPE_UFIXED_POINT_8", dtype::uint8, true},
    {0x0416, "QNN_DATATYPE_UFIXED_POINT_16", dtype::uint16, true},
    {0x0508, "QNN_DATATYPE_BOOL_8", dtype::boolean, false},
};

// Qnn_QuantizationEncoding_t: the code, its name, and the "quant_params"
// member that holds it.
struct qnn_encoding {
    std::int64_t code;
    std::string_view name;
    std::string_view member;
};

inline constexpr qnn_encoding qnn_encodings[] = {
    {0, "QNN_QUANTIZATION_ENCODING_SCALE_OFFSET", "scale_offset"},
    {1, "QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET", "axis_scale_offset"},
    {2, "QNN_QUANTIZATION_ENCODING_BW_SCALE_OFFSET", "bw_scale_offset"},
    {3, "QNN_QUANTIZATION_ENCODING_BW_AXIS_SCALE_OFFSET", "bw_axis_scale_offset"},
    {4, "QNN_QUANTIZATION_ENCODING_BLOCK", "block"},
    {5, "QNN_QUANTIZATION_ENCODING_BLOCKWISE_EXPANSION", "blockwise_expansion"},
    {6, "QNN_QUANTIZATION_ENCODING_VECTOR", "vector"},
};
inline constexpr std::int64_t qnn_encoding_undefined = 0x7FFFFFFF;

inline constexpr int qnn_net_json_max_depth = 64;

class qnn_net_json_reader {
public:
    explicit qnn_net_json_reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const json_value& at, const std::string& tensor, const std::string& reason) const {
        throw error(error_kind::schema,
                    "'" + file_ + "' line " + std::to_string(at.line()) + ":" + std::to_string(at.column()) +
                        (tensor.empty() ? std::string() : ", tensor '" + tensor + "'") + ": " + reason,
                    error_location::at_line(file_, std::uint32_t(at.line()), std::uint32_t(at.column()), tensor));
    }

    qnn_tensor_description describe(const std::string& name, const json_value& entry) const {
        if (!entry.is_object()) fail(entry, name, "a tensor entry must be an object");
        qnn_tensor_description description;
        const json_value* dims = entry.find("dims");
        const json_value* code = entry.find("data_type");
        if (dims == nullptr || code == nullptr) fail(entry, name, "a tensor needs \"dims\" and \"data_type\"");
        read_dims(*dims, name, description);
        read_type(*code, name, description);
        if (const json_value* format = entry.find("axis_format")) {
            if (!format->is_string()) fail(*format, name, "\"axis_format\" must be a string");
            const std::string& text = format->as_string();
            if (text == "NHWC" && description.dims.size() == 4) description.axis_order = std::vector<int>{0, 2, 3, 1};
            if (text == "NDHWC" && description.dims.size() == 5)
                description.axis_order = std::vector<int>{0, 2, 3, 4, 1};
        }
        if (const json_value* quant = entry.find("quant_params");
            quant != nullptr && description.fixed_point && description.unsupported_type.empty())
            read_quantization(*quant, name, description);
        return description;
    }

private:
    void read_dims(const json_value& dims, const std::string& name, qnn_tensor_description& description) const {
        if (!dims.is_array()) fail(dims, name, "\"dims\" must be an array of integers");
        if (dims.as_array().size() > std::size_t(max_rank))
            fail(dims, name, "\"dims\" has " + std::to_string(dims.as_array().size()) + " entries, more than numgap's maximum rank " +
                                 std::to_string(max_rank));
        for (const json_value& dim : dims.as_array()) {
            if (!dim.is_integer() || dim.as_integer() < 0) fail(dim, name, "\"dims\" entries must be non-negative integers");
            description.dims.push_back(dim.as_integer());
        }
        if (!numgap::detail::checked_byte_count(description.dims, 8))
            fail(dims, name, "\"dims\" " + numgap::detail::shape_text(description.dims) + " is absurd: its size in bytes overflows 64 bits");
    }

    void read_type(const json_value& code, const std::string& name, qnn_tensor_description& description) const {
        for (const qnn_data_type& known : qnn_data_types) {
            const bool same = code.is_integer() ? code.as_integer() == std::int64_t(known.code)
                              : code.is_string() ? code.as_string() == known.name
                                                 : false;
            if (!same) continue;
            description.type = known.type;
            description.fixed_point = known.fixed_point;
            return;
        }
        if (!code.is_integer() && !code.is_string())
            fail(code, name, "\"data_type\" must be a Qnn_DataType_t code (an integer or its name)");
        description.unsupported_type =
            "'" + file_ + "' gives tensor '" + name + "' the unsupported \"data_type\" " +
            (code.is_string() ? code.as_string() : std::to_string(code.as_integer())) +
            " (numgap reads QNN's INT, UINT, FLOAT_16/32, SFIXED/UFIXED_POINT 8/16 and BOOL_8 types)";
    }

    // The form "encoding" names, else the first known member present; null
    // when there is none (no quantization).
    const qnn_encoding* chosen_encoding(const json_value& quant, const std::string& name,
                                        qnn_tensor_description& description) const {
        if (const json_value* code = quant.find("encoding")) {
            if (!code->is_integer() && !code->is_string())
                fail(*code, name, "\"encoding\" must be a Qnn_QuantizationEncoding_t code (an integer or its name)");
            if (code->is_integer() ? code->as_integer() == qnn_encoding_undefined
                                   : code->as_string() == "QNN_QUANTIZATION_ENCODING_UNDEFINED")
                return nullptr;
            for (const qnn_encoding& known : qnn_encodings)
                if (code->is_integer() ? code->as_integer() == known.code : code->as_string() == known.name) {
                    if (quant.find(known.member) != nullptr) return &known;
                    // Integers that should be dequantized but cannot be must
                    // not be compared raw: the raw source refuses the tensor.
                    description.unsupported_encoding = "its quantization \"encoding\" " + std::string(known.name) +
                                                       " names \"" + std::string(known.member) +
                                                       "\", which its quant_params lacks";
                    return nullptr;
                }
            description.unsupported_encoding =
                "its quantization \"encoding\" " + (code->is_string() ? code->as_string() : std::to_string(code->as_integer())) +
                " is not one numgap knows";
            return nullptr;
        }
        for (const qnn_encoding& known : qnn_encodings)
            if (quant.find(known.member) != nullptr) return &known;
        return nullptr;
    }

    void read_quantization(const json_value& quant, const std::string& name, qnn_tensor_description& description) const {
        if (!quant.is_object()) fail(quant, name, "\"quant_params\" must be an object");
        const qnn_encoding* encoding = chosen_encoding(quant, name, description);
        if (encoding == nullptr) return;
        const json_value& form = *quant.find(encoding->member);
        if (!form.is_object()) fail(form, name, "\"" + std::string(encoding->member) + "\" must be an object");
        switch (encoding->code) {
        case 0:
        case 2: read_per_tensor(form, *encoding, name, description); return;
        case 1: read_axis_scale_offset(form, name, description); return;
        case 3: read_bw_axis_scale_offset(form, name, description); return;
        default:
            description.unsupported_encoding = "its quantization " + std::string(encoding->name) + " (\"" +
                                               std::string(encoding->member) +
                                               "\", scales per block) cannot be represented by numgap, which "
                                               "dequantizes per tensor or per axis";
        }
    }

    void read_per_tensor(const json_value& pair, const qnn_encoding& encoding, const std::string& name,
                         qnn_tensor_description& description) const {
        const std::string what = "\"" + std::string(encoding.member) + "\"";
        const float scale = scale_of(pair.find("scale"), pair, name, what);
        const std::int32_t zero_point = zero_point_of(pair.find("offset"), pair, name, what);
        if (!(scale > 0.0f)) return; // not quantized (QNN writes 0)
        description.scale = scale;
        description.zero_point = zero_point;
    }

    void read_axis_scale_offset(const json_value& form, const std::string& name, qnn_tensor_description& description) const {
        const json_value* pairs = form.find("scale_offsets");
        if (pairs == nullptr) pairs = form.find("bw_scale_offset");
        if (pairs == nullptr || !pairs->is_array())
            fail(form, name, "\"axis_scale_offset\" needs a \"scale_offsets\" array");
        const std::size_t channels = axis_channels(form, name, description, *pairs, "num_scale_offsets");
        for (const json_value& pair : pairs->as_array()) {
            if (!pair.is_object()) fail(pair, name, "\"scale_offsets\" entries must be objects");
            description.axis_scales.push_back(scale_of(pair.find("scale"), pair, name, "a \"scale_offsets\" entry"));
            description.axis_zero_points.push_back(zero_point_of(pair.find("offset"), pair, name, "a \"scale_offsets\" entry"));
        }
        check_axis_scales(*pairs, name, description, channels);
    }

    void read_bw_axis_scale_offset(const json_value& form, const std::string& name, qnn_tensor_description& description) const {
        const json_value* scales = form.find("scales");
        const json_value* offsets = form.find("offsets");
        if (scales == nullptr || !scales->is_array())
            fail(form, name, "\"bw_axis_scale_offset\" needs a \"scales\" array");
        if (offsets != nullptr && (!offsets->is_array() || offsets->as_array().size() != scales->as_array().size()))
            fail(*offsets, name, "\"bw_axis_scale_offset\" \"offsets\" must be an array as long as \"scales\"");
        const std::size_t channels = axis_channels(form, name, description, *scales, "num_elements");
        for (std::size_t i = 0; i < channels; ++i) {
            description.axis_scales.push_back(scale_of(&scales->as_array()[i], *scales, name, "\"scales\""));
            description.axis_zero_points.push_back(
                offsets == nullptr ? 0 : zero_point_of(&offsets->as_array()[i], *offsets, name, "\"offsets\""));
        }
        check_axis_scales(*scales, name, description, channels);
    }

    // Reads "axis" (a stored dimension) and checks that `list` (and the count
    // member, when given) has one entry per index of that dimension.
    std::size_t axis_channels(const json_value& form, const std::string& name, qnn_tensor_description& description,
                              const json_value& list, std::string_view count_member) const {
        const json_value* axis = form.find("axis");
        if (axis == nullptr || !axis->is_integer() || axis->as_integer() < 0 ||
            axis->as_integer() >= std::int64_t(description.dims.size()))
            fail(axis == nullptr ? form : *axis, name,
                 "a per-axis encoding needs an integer \"axis\" naming one of the " +
                     std::to_string(description.dims.size()) + " stored dimensions of \"dims\" " +
                     numgap::detail::shape_text(description.dims));
        description.quant_axis = int(axis->as_integer());
        const std::int64_t channels = description.dims[std::size_t(description.quant_axis)];
        if (std::int64_t(list.as_array().size()) != channels)
            fail(list, name,
                 "the per-axis encoding lists " + std::to_string(list.as_array().size()) + " scales but dimension " +
                     std::to_string(description.quant_axis) + " of \"dims\" " +
                     numgap::detail::shape_text(description.dims) + " has " + std::to_string(channels));
        if (const json_value* count = form.find(count_member);
            count != nullptr && (!count->is_integer() || count->as_integer() != channels))
            fail(*count, name, "\"" + std::string(count_member) + "\" must be the number of scales, " + std::to_string(channels));
        return std::size_t(channels);
    }

    // All zero is QNN's "not quantized"; otherwise every scale must be positive.
    void check_axis_scales(const json_value& list, const std::string& name, qnn_tensor_description& description,
                           std::size_t channels) const {
        const auto zero = std::count(description.axis_scales.begin(), description.axis_scales.end(), 0.0f);
        if (std::size_t(zero) == channels) {
            description.quant_axis = -1;
            description.axis_scales.clear();
            description.axis_zero_points.clear();
            return;
        }
        for (std::size_t i = 0; i < channels; ++i)
            if (!(description.axis_scales[i] > 0.0f))
                fail(list, name, "per-axis scale " + std::to_string(i) + " is not positive");
    }

    float scale_of(const json_value* scale, const json_value& at, const std::string& name, const std::string& what) const {
        if (scale == nullptr || !scale->is_number() || !(scale->as_number() >= 0.0) || !(scale->as_number() < 3.0e38))
            fail(scale == nullptr ? at : *scale, name, what + " needs a finite, non-negative numeric \"scale\"");
        return float(scale->as_number());
    }

    std::int32_t zero_point_of(const json_value* offset, const json_value& at, const std::string& name,
                               const std::string& what) const {
        // -offset must fit int32 too: INT32_MIN is refused.
        if (offset == nullptr || !offset->is_integer() || offset->as_integer() < -(std::int64_t(1) << 31) + 1 ||
            offset->as_integer() > (std::int64_t(1) << 31) - 1)
            fail(offset == nullptr ? at : *offset, name, what + " needs an integer \"offset\" within 32 bits");
        return std::int32_t(-offset->as_integer());
    }

    std::string file_;
};

} // namespace detail

// The tensors of the QNN model JSON `text` (read from `file`, named in errors), by name.
inline std::map<std::string, qnn_tensor_description> read_qnn_net_json(std::string_view text, const std::string& file) {
    const json_value root = parse_json(text, file, detail::qnn_net_json_max_depth);
    const detail::qnn_net_json_reader reader(file);
    if (!root.is_object()) reader.fail(root, {}, "a QNN model JSON must be an object");
    const json_value* graph = root.find("graph");
    if (graph == nullptr || !graph->is_object()) reader.fail(root, {}, "a QNN model JSON needs a \"graph\" object");
    const json_value* tensors = graph->find("tensors");
    if (tensors == nullptr || !tensors->is_object())
        reader.fail(*graph, {}, "\"graph\" needs a \"tensors\" object");
    std::map<std::string, qnn_tensor_description> described;
    for (const json_member& member : tensors->as_object())
        described.insert_or_assign(member.key, reader.describe(member.key, member.value));
    return described;
}

} // namespace numgap::io
