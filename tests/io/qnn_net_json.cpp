// Pins down io/qnn_net_json.hpp: the tensors of a QNN converter model JSON
// (dims, Qnn_DataType_t code or name, NHWC/NDHWC axis formats, scale_offset
// with zero point = -offset; per-axis axis_scale_offset and
// bw_axis_scale_offset; block forms and unknown data types marked unsupported
// per tensor), and hostile files refused with an error naming the file,
// line:column and tensor: wrong member types, over-long and absurd dims,
// per-axis encodings that do not fit the dims, deep nesting.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/io/qnn_net_json.hpp>

#include "temp_directory.hpp"

using numgap::io::read_qnn_net_json;
using numgap_test::contains;
using numgap_test::error_of;

namespace {
std::string with_tensor(const std::string& entry) { return R"({"graph": {"tensors": {"t": )" + entry + "}}}"; }
} // namespace

TEST_SUITE("io") {
TEST_CASE("qnn net.json: dims, data types, axis formats and scale_offset") {
    const auto described = read_qnn_net_json(R"({"model.cpp": "m.cpp", "graph": {"nodes": {}, "tensors": {
        "nhwc": {"id": 1, "dims": [1, 4, 4, 8], "data_type": 562, "axis_format": "NHWC", "src_axis_format": "NCHW"},
        "ndhwc": {"dims": [1, 2, 4, 4, 8], "data_type": 534, "axis_format": "NDHWC"},
        "q": {"dims": [2, 3], "data_type": "QNN_DATATYPE_SFIXED_POINT_8", "axis_format": "NC",
              "quant_params": {"definition": 1, "encoding": 0, "scale_offset": {"scale": 0.25, "offset": 3}}},
        "unquantized": {"dims": [5], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 0.0, "offset": 0}}},
        "integer": {"dims": [], "data_type": 50, "quant_params": {"scale_offset": {"scale": 2.0, "offset": 1}}}}}})",
                                             "net.json");
    REQUIRE(described.size() == 5);
    const auto& nhwc = described.at("nhwc");
    CHECK(nhwc.type == numgap::dtype::float32);
    CHECK(nhwc.dims == std::vector<std::int64_t>{1, 4, 4, 8});
    CHECK(nhwc.axis_order == std::vector<int>{0, 2, 3, 1});
    CHECK(!nhwc.fixed_point);
    CHECK(described.at("ndhwc").type == numgap::dtype::float16);
    CHECK(described.at("ndhwc").axis_order == std::vector<int>{0, 2, 3, 4, 1});
    const auto& q = described.at("q");
    CHECK(q.type == numgap::dtype::int8);
    CHECK(q.fixed_point);
    CHECK(!q.axis_order);
    CHECK(q.scale == 0.25f);
    CHECK(q.zero_point == -3);
    CHECK(described.at("unquantized").type == numgap::dtype::uint8);
    CHECK(!described.at("unquantized").scale);
    CHECK(described.at("integer").type == numgap::dtype::int32);
    CHECK(!described.at("integer").scale); // quant_params of a plain integer type are not read
}

TEST_CASE("qnn net.json: hostile files are errors naming the file, line:column and tensor") {
    const auto refused = [](const std::string& text) { return error_of([&] { (void)read_qnn_net_json(text, "m_net.json"); }); };
    CHECK(contains(refused("[]"), "'m_net.json' line 1:1: a QNN model JSON must be an object"));
    CHECK(contains(refused(R"({"graph": 3})"), "needs a \"graph\" object"));
    CHECK(contains(refused(R"({"graph": {"tensors": []}})"), "\"graph\" needs a \"tensors\" object"));
    CHECK(contains(refused(with_tensor("7")), "tensor 't': a tensor entry must be an object"));
    CHECK(contains(refused(with_tensor(R"({"dims": "1x4", "data_type": 562})")), "tensor 't': \"dims\" must be an array"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1, -4], "data_type": 562})")), "non-negative integers"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1.5], "data_type": 562})")), "non-negative integers"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1,1,1,1,1,1,1,1,1], "data_type": 562})")), "more than numgap's maximum rank 8"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1099511627776, 1099511627776], "data_type": 562})")),
                   "overflows 64 bits"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": [562]})")), "must be a Qnn_DataType_t code"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1]})")), "needs \"dims\" and \"data_type\""));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 562, "axis_format": 4})")), "\"axis_format\" must be a string"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 1032, "quant_params": {"scale_offset": {"scale": "x", "offset": 0}}})")),
                   "\"scale_offset\" needs a finite, non-negative numeric \"scale\""));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 1, "offset": 4294967296}}})")),
                   "integer \"offset\" within 32 bits"));
    const std::string line = refused("{\"graph\": {\"tensors\": {\n  \"t\": {\"dims\": {}, \"data_type\": 562}}}}");
    CHECK(contains(line, "line 2:17, tensor 't'"));
    CHECK(contains(refused(std::string(1000, '[') + std::string(1000, ']')), "m_net.json"));
    CHECK(contains(refused(R"({"graph": {"tensors": {"t": )"), "m_net.json"));
}

TEST_CASE("qnn net.json: per-axis encodings, bitwidth forms, and what numgap cannot represent") {
    const auto described = read_qnn_net_json(R"({"graph": {"tensors": {
        "axis": {"dims": [1, 2, 3], "data_type": 1032, "quant_params": {"definition": 1, "encoding": 1,
                 "axis_scale_offset": {"axis": 2, "num_scale_offsets": 3, "scale_offsets": [
                     {"bitwidth": 8, "minimum": -1.0, "maximum": 1.0, "scale": 0.5, "offset": -128, "is_symmetric": false},
                     {"scale": 0.25, "offset": 0}, {"scale": 2, "offset": 7}]}}},
        "bw_list": {"dims": [2, 1], "data_type": 776, "quant_params": {"encoding": "QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET",
                    "axis_scale_offset": {"axis": 0, "bw_scale_offset": [{"bitwidth": 4, "scale": 1.5, "offset": 0},
                                                                         {"bitwidth": 4, "scale": 3.0, "offset": -2}]}}},
        "bw_axis": {"dims": [2, 2], "data_type": 1032, "quant_params": {"encoding": 3,
                    "bw_axis_scale_offset": {"bitwidth": 4, "axis": 1, "num_elements": 2, "scales": [0.5, 1.0], "offsets": [-8, 0]}}},
        "bw_axis_no_offsets": {"dims": [2], "data_type": 1032, "quant_params": {"bw_axis_scale_offset": {"axis": 0, "scales": [0.5, 1.0]}}},
        "bw_tensor": {"dims": [4], "data_type": 1032, "quant_params": {"encoding": 2, "bw_scale_offset": {"bitwidth": 4, "scale": 0.125, "offset": -8}}},
        "all_zero": {"dims": [2], "data_type": 1032, "quant_params": {"axis_scale_offset": {"axis": 0, "scale_offsets": [
                     {"scale": 0, "offset": 0}, {"scale": 0, "offset": 0}]}}},
        "undefined": {"dims": [2], "data_type": 1032, "quant_params": {"encoding": 2147483647, "scale_offset": {"scale": 1.0, "offset": 0}}},
        "lpbq": {"dims": [4, 8], "data_type": 1032, "quant_params": {"encoding": 5, "blockwise_expansion": {"axis": 0, "block_size": 4}}},
        "block_by_name": {"dims": [4], "data_type": 1032, "quant_params": {"block": {"block_size": 2}}},
        "future": {"dims": [4], "data_type": 1032, "quant_params": {"encoding": 9, "scale_offset": {"scale": 1.0, "offset": 0}}},
        "lacking": {"dims": [4], "data_type": 1032, "quant_params": {"encoding": 1, "scale_offset": {"scale": 0.1, "offset": -128}}},
        "int4": {"dims": [8], "data_type": 772},
        "float64": {"dims": [1], "data_type": "QNN_DATATYPE_FLOAT_64"}}}})",
                                             "per_axis_net.json");
    const auto& axis = described.at("axis");
    CHECK(axis.quant_axis == 2);
    CHECK(!axis.scale);
    CHECK(axis.axis_scales == std::vector<float>{0.5f, 0.25f, 2.0f});
    CHECK(axis.axis_zero_points == std::vector<std::int32_t>{128, 0, -7});
    CHECK(axis.unsupported_encoding.empty());
    const auto& bw_list = described.at("bw_list");
    CHECK(bw_list.quant_axis == 0);
    CHECK(bw_list.axis_scales == std::vector<float>{1.5f, 3.0f});
    CHECK(bw_list.axis_zero_points == std::vector<std::int32_t>{0, 2});
    const auto& bw_axis = described.at("bw_axis");
    CHECK(bw_axis.quant_axis == 1);
    CHECK(bw_axis.axis_scales == std::vector<float>{0.5f, 1.0f});
    CHECK(bw_axis.axis_zero_points == std::vector<std::int32_t>{8, 0});
    CHECK(described.at("bw_axis_no_offsets").axis_zero_points == std::vector<std::int32_t>{0, 0});
    CHECK(described.at("bw_tensor").scale == 0.125f);
    CHECK(described.at("bw_tensor").zero_point == 8);
    CHECK(described.at("all_zero").quant_axis == -1);
    CHECK(described.at("all_zero").axis_scales.empty());
    CHECK(!described.at("undefined").scale);
    CHECK(described.at("undefined").unsupported_encoding.empty());
    CHECK(contains(described.at("lpbq").unsupported_encoding, "QNN_QUANTIZATION_ENCODING_BLOCKWISE_EXPANSION"));
    CHECK(described.at("lpbq").quant_axis == -1);
    CHECK(contains(described.at("block_by_name").unsupported_encoding, "QNN_QUANTIZATION_ENCODING_BLOCK ("));
    CHECK(contains(described.at("future").unsupported_encoding, "\"encoding\" 9 is not one numgap knows"));
    CHECK(!described.at("future").scale);
    // An encoding whose member is absent is not read as "not quantized": the
    // integers would then be compared raw against a float reference.
    CHECK(contains(described.at("lacking").unsupported_encoding,
                   "QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET names \"axis_scale_offset\", which its quant_params lacks"));
    CHECK(contains(described.at("int4").unsupported_type, "tensor 'int4' the unsupported \"data_type\" 772"));
    CHECK(contains(described.at("float64").unsupported_type, "unsupported \"data_type\" QNN_DATATYPE_FLOAT_64"));
    CHECK(described.at("float64").dims == std::vector<std::int64_t>{1});
    CHECK(described.at("axis").unsupported_type.empty());
}

TEST_CASE("qnn net.json: per-axis encodings that do not fit the tensor are errors naming the tensor") {
    const auto refused = [](const std::string& quant) {
        return error_of([&] {
            (void)read_qnn_net_json(with_tensor(R"({"dims": [1, 3], "data_type": 1032, "quant_params": )" + quant + "}"), "m_net.json");
        });
    };
    const std::string three = R"([{"scale": 1, "offset": 0}, {"scale": 1, "offset": 0}, {"scale": 1, "offset": 0}])";
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 2, "scale_offsets": )" + three + "}}"),
                   "tensor 't': a per-axis encoding needs an integer \"axis\" naming one of the 2 stored dimensions of \"dims\" (1, 3)"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": -1, "scale_offsets": )" + three + "}}"), "needs an integer \"axis\""));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 9223372036854775807, "scale_offsets": )" + three + "}}"),
                   "needs an integer \"axis\""));
    CHECK(contains(refused(R"({"axis_scale_offset": {"scale_offsets": )" + three + "}}"), "needs an integer \"axis\""));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 0, "scale_offsets": )" + three + "}}"),
                   "lists 3 scales but dimension 0 of \"dims\" (1, 3) has 1"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "num_scale_offsets": 4, "scale_offsets": )" + three + "}}"),
                   "\"num_scale_offsets\" must be the number of scales, 3"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1}})"), "needs a \"scale_offsets\" array"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": [1, 2, 3]}})"), "entries must be objects"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": [{"scale": 1, "offset": 0}, {"scale": 0, "offset": 0}, {"scale": 1, "offset": 0}]}})"),
                   "per-axis scale 1 is not positive"));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": [{"scale": -1, "offset": 0}, {"scale": 1, "offset": 0}, {"scale": 1, "offset": 0}]}})"),
                   "needs a finite, non-negative numeric \"scale\""));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": [{"scale": 1e39, "offset": 0}, {"scale": 1, "offset": 0}, {"scale": 1, "offset": 0}]}})"),
                   "needs a finite, non-negative numeric \"scale\""));
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": [{"scale": 1, "offset": -2147483648}, {"scale": 1, "offset": 0}, {"scale": 1, "offset": 0}]}})"),
                   "integer \"offset\" within 32 bits"));
    CHECK(contains(refused(R"({"bw_axis_scale_offset": {"axis": 1, "scales": [1, 1, 1], "offsets": [0]}})"),
                   "\"offsets\" must be an array as long as \"scales\""));
    CHECK(contains(refused(R"({"bw_axis_scale_offset": {"axis": 1, "num_elements": 2, "scales": [1, 1, 1]}})"),
                   "\"num_elements\" must be the number of scales, 3"));
    CHECK(contains(refused(R"({"bw_axis_scale_offset": {"axis": 1, "scales": 3}})"), "needs a \"scales\" array"));
    CHECK(contains(refused(R"({"encoding": [1], "axis_scale_offset": {}})"), "\"encoding\" must be a Qnn_QuantizationEncoding_t code"));
    CHECK(contains(refused(R"({"encoding": 1, "axis_scale_offset": []})"), "\"axis_scale_offset\" must be an object"));
    // A huge list is bounded by the file: 100000 scales for a dimension of 3.
    std::string many = "[";
    for (int i = 0; i < 100000; ++i) many += std::string(i == 0 ? "" : ",") + R"({"scale":1,"offset":0})";
    many += "]";
    CHECK(contains(refused(R"({"axis_scale_offset": {"axis": 1, "scale_offsets": )" + many + "}}"), "lists 100000 scales"));
}
}
