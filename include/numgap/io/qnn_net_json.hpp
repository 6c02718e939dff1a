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
//  - "quant_params.scale_offset": read for fixed-point types only, when scale
//    is positive. QNN's convention is real = scale * (q + offset), so numgap's
//    zero point (real = scale * (q - zero_point)) is -offset.
// Trust: the file is parsed by io/json (depth limited to 64 here); a member
// of the wrong type, an unsupported code, a negative or over-long "dims" is an
// error (kind schema) naming the file, line:column and the tensor.
// Complexity: O(file size).
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
    std::optional<float> scale;
    std::int32_t zero_point = 0;
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
        if (const json_value* quant = entry.find("quant_params"); quant != nullptr && description.fixed_point)
            read_scale_offset(*quant, name, description);
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
        fail(code, name,
             "unsupported \"data_type\" " + (code.is_string() ? code.as_string() : std::to_string(code.as_integer())) +
                 " (numgap reads QNN's INT, UINT, FLOAT_16/32, SFIXED/UFIXED_POINT 8/16 and BOOL_8 types)");
    }

    void read_scale_offset(const json_value& quant, const std::string& name, qnn_tensor_description& description) const {
        if (!quant.is_object()) fail(quant, name, "\"quant_params\" must be an object");
        const json_value* pair = quant.find("scale_offset");
        if (pair == nullptr) return; // another encoding (per axis): no per-tensor parameters
        if (!pair->is_object()) fail(*pair, name, "\"scale_offset\" must be an object");
        const json_value* scale = pair->find("scale");
        const json_value* offset = pair->find("offset");
        if (scale == nullptr || !scale->is_number()) fail(*pair, name, "\"scale_offset\" needs a numeric \"scale\"");
        if (offset == nullptr || !offset->is_integer() || offset->as_integer() < -(std::int64_t(1) << 31) + 1 ||
            offset->as_integer() > (std::int64_t(1) << 31) - 1)
            fail(*pair, name, "\"scale_offset\" needs an integer \"offset\" within 32 bits");
        if (!(scale->as_number() > 0.0) || !(scale->as_number() < 3.0e38)) return; // not quantized (QNN writes 0)
        description.scale = float(scale->as_number());
        description.zero_point = std::int32_t(-offset->as_integer());
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
