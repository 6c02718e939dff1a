// Pins down ETDump reading (io/flatbuffer.hpp, io/etdump.hpp,
// io/etdump_run.hpp) on files written byte by byte here from ExecuTorch's
// public schema (etdump_builder.hpp): the key rule, tensor lists, repeats,
// runs and #run=N, scalar types incl. bfloat16 and float16, strides, debug
// handles and event order; and hostile files (every truncation, a wrong
// identifier, offsets out of bounds, a vtable outside the buffer, shared
// offsets, tensors past the debug buffer's end, unknown scalar types, keys
// beyond their budget), each
// refused with a numgap::error naming the file and offset, never a crash;
// and, when flatc is installed, files flatc writes from a schema of our own.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>

#include <numgap/core/error.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/io/etdump.hpp>
#include <numgap/io/etdump_run.hpp>
#include <numgap/io/file_descriptor.hpp>

#include "etdump_builder.hpp"
#include "temp_directory.hpp"

using numgap_test::contains;
using numgap_test::error_of;
namespace et = numgap_test::etdump;
namespace fb = numgap_test::flatbuffers;

namespace {

numgap::io::file_descriptor open_read(const std::filesystem::path& path) {
    numgap::io::file_descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(file.valid());
    return file;
}

// The run `run` of ETDump bytes `dump` with debug buffer `buffer` (none when nullopt).
numgap::io::etdump_tensors open_etdump(const std::vector<std::byte>& dump, std::optional<std::vector<std::byte>> buffer,
                                       std::optional<std::size_t> run = std::nullopt) {
    static numgap_test::temp_directory directory;
    static int counter = 0;
    const std::string name = "dump" + std::to_string(counter++);
    const auto dump_path = directory.write(name + ".etdp", dump);
    std::optional<numgap::io::file_descriptor> buffer_file;
    std::filesystem::path buffer_path;
    if (buffer) {
        buffer_path = directory.write(name + ".bin", *buffer);
        buffer_file = open_read(buffer_path);
    }
    numgap::io::etdump_tensors tensors;
    tensors.open(open_read(dump_path), dump_path, std::move(buffer_file), buffer_path, run);
    return tensors;
}

template <class T>
T element(const numgap::tensor_view& view, std::int64_t index) {
    T value;
    std::memcpy(&value, static_cast<const std::byte*>(view.data()) + index * std::int64_t(sizeof(T)), sizeof(T));
    return value;
}

numgap::error error_from(auto&& action) {
    try {
        action();
    } catch (const numgap::error& failure) {
        return failure;
    }
    FAIL("no numgap::error");
    return numgap::error("unreachable");
}

// A run of every kind of event the key rule distinguishes, plus events the reader skips.
struct sample {
    et::debug_buffer buffer;
    std::vector<std::byte> dump;
    sample() {
        const auto conv = buffer.add(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
        const auto split0 = buffer.add(std::vector<float>{5.0f});
        const auto split1 = buffer.add(std::vector<float>{6.0f, 7.0f});
        const auto delegate_int = buffer.add(std::vector<std::uint16_t>{0x3F80, 0xC000}); // bf16 1, -2
        const auto delegate_str = buffer.add(std::vector<std::uint16_t>{0x3C00, 0x4000}); // f16 1, 2
        const auto instruction = buffer.add(std::vector<std::int32_t>{-7});
        const auto repeat = buffer.add(std::vector<float>{9.0f});
        dump = et::file({et::run_data(
            "forward",
            {et::profile_event("Method::execute"),
             et::debug_event({.name = "conv"}, et::tensor_value(et::tensor(et::float32, {2, 2}, conv))),
             et::debug_event({.name = "split"}, et::list_value({et::tensor(et::float32, {1}, split0),
                                                                et::tensor(et::float32, {2}, split1)})),
             et::debug_event({.instruction = 3}, et::int_value(42)),
             et::debug_event({.delegate_int = 17, .instruction = 4},
                             et::tensor_value(et::tensor(et::bfloat16, {2}, delegate_int))),
             et::debug_event({.delegate_str = "qnn/add", .instruction = 5},
                             et::tensor_value(et::tensor(et::half, {2}, delegate_str))),
             et::debug_event({.instruction = 6}, et::tensor_value(et::tensor(et::int32, {1}, instruction), true)),
             et::debug_event({}, et::tensor_value(et::tensor(et::float32, {0}, -1))),
             et::debug_event({.name = "conv"}, et::tensor_value(et::tensor(et::float32, {1}, repeat)))})});
    }
};

} // namespace

TEST_SUITE("io") {

TEST_CASE("etdump: the parser reads debug events with tensors, in order, and skips the others") {
    const sample s;
    CHECK(numgap::io::has_etdump_signature(s.dump));
    const numgap::io::etdump_contents contents = numgap::io::parse_etdump(s.dump, "sample.etdp");
    CHECK(contents.size_prefixed);
    REQUIRE(contents.runs.size() == 1);
    const numgap::io::etdump_run_data& run = contents.runs[0];
    CHECK(run.name == "forward");
    CHECK(run.event_count == 9);
    REQUIRE(run.tensor_events.size() == 7); // the profile and Int events carry no tensor
    CHECK(run.tensor_events[0].name == "conv");
    CHECK(run.tensor_events[0].event_index == 1);
    CHECK(run.tensor_events[0].tensors[0].sizes == std::vector<std::int64_t>{2, 2});
    CHECK(run.tensor_events[1].tensor_list);
    CHECK(run.tensor_events[1].tensors.size() == 2);
    CHECK(run.tensor_events[2].delegate_debug_id_int == 17);
    CHECK(run.tensor_events[2].instruction_id == 4);
    CHECK(run.tensor_events[3].delegate_debug_id_str == "qnn/add");
    CHECK(run.tensor_events[4].program_output);
    CHECK_FALSE(run.tensor_events[3].program_output);
    CHECK(run.tensor_events[5].tensors[0].offset == -1);

    // flatc writes the same tables without the size prefix: read as well.
    const sample plain_source;
    const numgap::io::etdump_contents plain =
        numgap::io::parse_etdump(et::file({et::run_data("r", {et::debug_event({.name = "a"}, et::int_value(1))})}, false),
                                 "plain.etdp");
    CHECK_FALSE(plain.size_prefixed);
    REQUIRE(plain.runs.size() == 1);
    CHECK(plain.runs[0].event_count == 1);
    CHECK(plain.runs[0].tensor_events.empty());
}

TEST_CASE("etdump: keys follow name, delegate id, instruction id, event index; lists and repeats are suffixed") {
    const sample s;
    const numgap::io::etdump_tensors tensors = open_etdump(s.dump, s.buffer.bytes());
    std::vector<std::string> in_order;
    for (const auto& entry : tensors.entries()) in_order.push_back(entry.key);
    CHECK(in_order == std::vector<std::string>{"conv", "split.0", "split.1", "delegate_17", "qnn/add",
                                                "instruction_6", "event_7", "conv#2"});
    CHECK(tensors.keys() == std::vector<std::string>{"conv", "conv#2", "delegate_17", "event_7", "instruction_6",
                                                      "qnn/add", "split.0", "split.1"});
    // Nodes: one per event, in event order; the integer delegate id is the node's debug handle.
    REQUIRE(tensors.nodes().size() == 7);
    CHECK(tensors.nodes()[0].name == "conv");
    CHECK(tensors.nodes()[1].name == "split");
    CHECK(tensors.nodes()[1].outputs == std::vector<std::string>{"split.0", "split.1"});
    CHECK(tensors.nodes()[2].debug_handles == std::vector<std::int64_t>{17});
    CHECK(tensors.nodes()[3].debug_handles.empty());
    CHECK(tensors.nodes()[6].name == "conv#2");

    // Values come from the debug buffer, in place.
    const numgap::tensor_view conv = tensors.view(*tensors.find("conv"));
    CHECK(conv.type() == numgap::dtype::float32);
    CHECK(conv.shape(0) == 2);
    CHECK(element<float>(conv, 3) == 4.0f);
    CHECK(static_cast<const std::byte*>(conv.data()) >= tensors.buffer_mapping()->bytes().data());
    CHECK(element<float>(tensors.view(*tensors.find("split.1")), 1) == 7.0f);
    const numgap::tensor_view bf16 = tensors.view(*tensors.find("delegate_17"));
    CHECK(bf16.type() == numgap::dtype::bfloat16);
    CHECK(element<std::uint16_t>(bf16, 1) == 0xC000);
    CHECK(tensors.view(*tensors.find("qnn/add")).type() == numgap::dtype::float16);
    CHECK(element<std::int32_t>(tensors.view(*tensors.find("instruction_6")), 0) == -7);
    CHECK(tensors.view(*tensors.find("event_7")).size() == 0);
    CHECK(element<float>(tensors.view(*tensors.find("conv#2")), 0) == 9.0f);
    CHECK(tensors.find("split") == nullptr);
}

TEST_CASE("etdump: a key taken by an earlier event's list output moves on to the next suffix") {
    et::debug_buffer buffer;
    const auto at = buffer.add(std::vector<float>{1.0f});
    const auto dump = et::file({et::run_data(
        "r", {et::debug_event({.name = "a"}, et::list_value({et::tensor(et::float32, {1}, at)})),
              et::debug_event({.name = "a.0"}, et::tensor_value(et::tensor(et::float32, {1}, at))),
              et::debug_event({.name = "a"}, et::tensor_value(et::tensor(et::float32, {1}, at)))})});
    const numgap::io::etdump_tensors tensors = open_etdump(dump, buffer.bytes());
    std::vector<std::string> in_order;
    for (const auto& entry : tensors.entries()) in_order.push_back(entry.key);
    CHECK(in_order == std::vector<std::string>{"a.0", "a.0#2", "a#2"});

    // An operator run in a loop: linear, in execution order.
    std::vector<fb::node_pointer> loop;
    for (int i = 0; i < 3000; ++i)
        loop.push_back(et::debug_event({.name = "loop"}, et::tensor_value(et::tensor(et::float32, {1}, at))));
    const numgap::io::etdump_tensors looped = open_etdump(et::file({et::run_data("r", std::move(loop))}), buffer.bytes());
    REQUIRE(looped.entries().size() == 3000);
    CHECK(looped.entries()[0].key == "loop");
    CHECK(looped.entries()[1].key == "loop#2");
    CHECK(looped.entries()[2999].key == "loop#3000");
}

TEST_CASE("etdump: strides give the layout of the buffer's bytes (channels-last read as the logical tensor)") {
    et::debug_buffer buffer;
    // Logical (1, 2, 1, 2) NCHW stored channels-last: strides (4, 1, 4, 2).
    const auto at = buffer.add(std::vector<float>{10.0f, 20.0f, 11.0f, 21.0f});
    const auto dump = et::file(
        {et::run_data("r", {et::debug_event({.name = "nhwc"},
                                            et::tensor_value(et::tensor(et::float32, {1, 2, 1, 2}, at, {4, 1, 4, 2})))})});
    const numgap::io::etdump_tensors tensors = open_etdump(dump, buffer.bytes());
    const numgap::tensor_view view = tensors.view(*tensors.find("nhwc"));
    CHECK(view.stride(1) == 1);
    CHECK(view.stride(3) == 2);

    const auto too_far = et::file(
        {et::run_data("r", {et::debug_event({.name = "nhwc"},
                                            et::tensor_value(et::tensor(et::float32, {1, 2, 1, 2}, at, {4, 1, 4, 3})))})});
    CHECK(contains(error_of([&] { (void)open_etdump(too_far, buffer.bytes()); }), "reach element 4 of a tensor of 4"));
}

TEST_CASE("etdump: several runs need #run=N; the error lists them") {
    et::debug_buffer buffer;
    const auto first = buffer.add(std::vector<float>{1.0f});
    const auto second = buffer.add(std::vector<float>{2.0f});
    const auto dump = et::file(
        {et::run_data("warmup", {et::debug_event({.name = "x"}, et::tensor_value(et::tensor(et::float32, {1}, first)))}),
         et::run_data("measured", {et::debug_event({.name = "x"}, et::tensor_value(et::tensor(et::float32, {1}, second)))})});
    const numgap::error several = error_from([&] { (void)open_etdump(dump, buffer.bytes()); });
    CHECK(several.kind() == numgap::error_kind::usage);
    CHECK(contains(several.what(), "holds 2 runs; choose one by appending #run=N"));
    CHECK(contains(several.what(), "#run=0 'warmup' (1 tensors), #run=1 'measured' (1 tensors)"));
    const numgap::io::etdump_tensors chosen = open_etdump(dump, buffer.bytes(), 1);
    CHECK(element<float>(chosen.view(*chosen.find("x")), 0) == 2.0f);
    CHECK(contains(error_of([&] { (void)open_etdump(dump, buffer.bytes(), 2); }), "#run=2 does not exist"));

    CHECK(numgap::io::parse_etdump_run_selector("run=12", "d.etdp") == 12);
    CHECK(contains(error_of([] { (void)numgap::io::parse_etdump_run_selector("run=x", "d.etdp"); }),
                   "the selector must be #run=N with N a run index (0, 1, ...), not '#run=x'"));
    CHECK(contains(error_of([] { (void)numgap::io::parse_etdump_run_selector("trt-runner", "d.etdp"); }), "#run=N"));
}

TEST_CASE("etdump: scalar types numgap does not compute with are refused per tensor, naming the event") {
    et::debug_buffer buffer;
    const auto longs = buffer.add(std::vector<std::int64_t>{1, 2});
    const auto fine = buffer.add(std::vector<float>{1.0f});
    const auto dump = et::file({et::run_data(
        "r", {et::debug_event({.name = "indices"}, et::tensor_value(et::tensor(et::int64, {2}, longs))),
              et::debug_event({.name = "mystery"}, et::tensor_value(et::tensor(100, {2}, longs))),
              et::debug_event({.name = "fine"}, et::tensor_value(et::tensor(et::float32, {1}, fine)))})});
    const numgap::io::etdump_tensors tensors = open_etdump(dump, buffer.bytes());
    const numgap::error long_error = error_from([&] { (void)tensors.view(*tensors.find("indices")); });
    CHECK(long_error.kind() == numgap::error_kind::dtype);
    CHECK(contains(long_error.what(), "unsupported scalar type 4 (Long) in event 'indices'"));
    CHECK(long_error.where().has_offset());
    CHECK(contains(error_of([&] { (void)tensors.view(*tensors.find("mystery")); }),
                   "unsupported scalar type 100 (not an ExecuTorch ScalarType) in event 'mystery'"));
    CHECK(element<float>(tensors.view(*tensors.find("fine")), 0) == 1.0f);
}

TEST_CASE("etdump: Float8_e5m2 (23) and Float8_e4m3fn (24) read as the float8 dtypes") {
    et::debug_buffer buffer;
    const auto e5m2 = buffer.add(std::vector<std::uint8_t>{0x3c, 0xc0});
    const auto e4m3 = buffer.add(std::vector<std::uint8_t>{0x38, 0x7e});
    const auto dump = et::file({et::run_data(
        "r", {et::debug_event({.name = "e5m2"}, et::tensor_value(et::tensor(23, {2}, e5m2))),
              et::debug_event({.name = "e4m3"}, et::tensor_value(et::tensor(24, {2}, e4m3)))})});
    const numgap::io::etdump_tensors tensors = open_etdump(dump, buffer.bytes());
    const numgap::tensor_view e5m2_view = tensors.view(*tensors.find("e5m2"));
    CHECK(e5m2_view.type() == numgap::dtype::float8_e5m2);
    CHECK(numgap::to_float(element<numgap::float8_e5m2>(e5m2_view, 1)) == -2.0f);
    const numgap::tensor_view e4m3_view = tensors.view(*tensors.find("e4m3"));
    CHECK(e4m3_view.type() == numgap::dtype::float8_e4m3fn);
    CHECK(numgap::to_float(element<numgap::float8_e4m3fn>(e4m3_view, 1)) == 448.0f);
}

TEST_CASE("etdump: tensors outside the debug buffer, or without one, are refused at open") {
    et::debug_buffer buffer;
    const auto at = buffer.add(std::vector<float>{1.0f, 2.0f});
    const auto past_end = et::file(
        {et::run_data("r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, {3}, at)))})});
    const numgap::error past = error_from([&] { (void)open_etdump(past_end, buffer.bytes()); });
    CHECK(past.kind() == numgap::error_kind::format);
    CHECK(contains(past.what(), "tensor 't': its 12 bytes at offset 0 of debug buffer"));
    CHECK(contains(past.what(), "lie outside its 8 bytes"));
    const auto negative = et::file(
        {et::run_data("r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, {1}, -1)))})});
    CHECK(contains(error_of([&] { (void)open_etdump(negative, buffer.bytes()); }), "at offset -1"));
    const auto huge = et::file({et::run_data(
        "r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, {1}, std::int64_t(1) << 62)))})});
    CHECK(contains(error_of([&] { (void)open_etdump(huge, buffer.bytes()); }), "lie outside"));
    const auto absurd = et::file({et::run_data(
        "r", {et::debug_event({.name = "t"},
                              et::tensor_value(et::tensor(et::float32, {std::int64_t(1) << 40, std::int64_t(1) << 40}, 0)))})});
    CHECK(error_from([&] { (void)open_etdump(absurd, buffer.bytes()); }).kind() == numgap::error_kind::limit);
    const auto fits = et::file(
        {et::run_data("r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, {2}, at)))})});
    CHECK(contains(error_of([&] { (void)open_etdump(fits, std::nullopt); }), "--debug-buffer FILE"));
    const auto negative_size = et::file(
        {et::run_data("r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, {-2}, at)))})});
    CHECK(contains(error_of([&] { (void)open_etdump(negative_size, buffer.bytes()); }), "dimension 0 is negative (-2)"));
    const auto deep = et::file({et::run_data(
        "r", {et::debug_event({.name = "t"}, et::tensor_value(et::tensor(et::float32, std::vector<std::int64_t>(9, 1), at)))})});
    CHECK(error_from([&] { (void)open_etdump(deep, buffer.bytes()); }).kind() == numgap::error_kind::limit);
}

TEST_CASE("etdump: hostile files are refused with the file and offset, never read out of bounds") {
    const sample s;
    // Every truncation of a valid size-prefixed file: an error, never a crash.
    for (std::size_t size = 0; size < s.dump.size(); ++size) {
        CAPTURE(size);
        const std::vector<std::byte> cut(s.dump.begin(), s.dump.begin() + std::ptrdiff_t(size));
        const numgap::error failure = error_from([&] { (void)numgap::io::parse_etdump(cut, "cut.etdp"); });
        CHECK(contains(failure.what(), "cut.etdp"));
        CHECK(failure.kind() == numgap::error_kind::format);
    }
    // A size prefix larger than the file.
    std::vector<std::byte> prefix = s.dump;
    prefix[0] = std::byte{0xff};
    prefix[1] = std::byte{0xff};
    CHECK(contains(error_of([&] { (void)numgap::io::parse_etdump(prefix, "p.etdp"); }), "is truncated: its size prefix"));
    // A wrong identifier.
    const auto wrong = et::file({et::run_data("r", {})}, true, "ET12");
    CHECK_FALSE(numgap::io::has_etdump_signature(wrong));
    CHECK(contains(error_of([&] { (void)numgap::io::parse_etdump(wrong, "w.etdp"); }), "no ETDump file identifier"));
    // A root offset past the end.
    std::vector<std::byte> root = s.dump;
    root[4] = std::byte{0xf0};
    root[5] = std::byte{0xff};
    const numgap::error past = error_from([&] { (void)numgap::io::parse_etdump(root, "r.etdp"); });
    CHECK(contains(past.what(), "flatbuffer file 'r.etdp', ETDump root table at byte offset 4"));
    CHECK(past.where().offset == 4);
    CHECK(past.where().file == "r.etdp");
    // Every single-byte corruption of the flatbuffer: refused or read, never out of bounds
    // (the sanitizer build checks the "never").
    for (std::size_t at = 4; at < s.dump.size(); ++at) {
        for (const std::byte value : {std::byte{0x00}, std::byte{0x7f}, std::byte{0x80}, std::byte{0xff}}) {
            std::vector<std::byte> corrupt = s.dump;
            corrupt[at] = value;
            try {
                (void)numgap::io::parse_etdump(corrupt, "c.etdp");
            } catch (const numgap::error&) {
            }
        }
    }
}

TEST_CASE("etdump: offsets shared many times hit the amplification limit") {
    // Built by hand: a run_data vector naming one RunData 4096 times, whose
    // events vector names one (empty) Event 4096 times: 16M events visited
    // from a file of about 33 KB. Layout (no size prefix): [0] root uoffset,
    // [4] "ED00", then each vtable just before its table.
    std::vector<std::byte> bytes;
    const auto put32 = [&](std::size_t at, std::uint32_t value) {
        for (int i = 0; i < 4; ++i) bytes[at + std::size_t(i)] = std::byte((value >> (8 * i)) & 0xff);
    };
    bytes.assign(8, std::byte{0});
    const auto append32 = [&](std::uint32_t value) {
        for (int i = 0; i < 4; ++i) bytes.push_back(std::byte((value >> (8 * i)) & 0xff));
    };
    const auto append16 = [&](std::uint16_t value) {
        bytes.push_back(std::byte(value & 0xff));
        bytes.push_back(std::byte(value >> 8));
    };
    bytes[4] = std::byte('E'), bytes[5] = std::byte('D'), bytes[6] = std::byte('0'), bytes[7] = std::byte('0');
    constexpr std::uint32_t repeats = 4096;
    // ETDump vtable at 8: size 8, inline 8, field0 absent, field1 (run_data) at 4.
    append16(8), append16(8), append16(0), append16(4);
    const std::size_t etdump_table = bytes.size(); // 16
    append32(std::uint32_t(etdump_table - 8));      // soffset to vtable
    const std::size_t run_data_field = bytes.size();
    append32(0);                                    // patched below
    const std::size_t runs_vector = bytes.size();
    put32(run_data_field, std::uint32_t(runs_vector - run_data_field));
    append32(repeats);
    const std::size_t runs_slots = bytes.size();
    for (std::uint32_t i = 0; i < repeats; ++i) append32(0);
    // RunData vtable: size 12, inline 8, fields 0..2 absent, field 3 (events) at 4.
    const std::size_t run_vtable = bytes.size();
    append16(12), append16(8), append16(0), append16(0), append16(0), append16(4);
    const std::size_t run_table = bytes.size();
    append32(std::uint32_t(run_table - run_vtable));
    const std::size_t events_field = bytes.size();
    append32(0);
    for (std::uint32_t i = 0; i < repeats; ++i)
        put32(runs_slots + 4 * i, std::uint32_t(run_table - (runs_slots + 4 * i)));
    const std::size_t events_vector = bytes.size();
    put32(events_field, std::uint32_t(events_vector - events_field));
    append32(repeats);
    const std::size_t event_slots = bytes.size();
    for (std::uint32_t i = 0; i < repeats; ++i) append32(0);
    // Event vtable: size 4 (no fields), inline 4: an empty Event.
    const std::size_t event_vtable = bytes.size();
    append16(4), append16(4);
    const std::size_t event_table = bytes.size();
    append32(std::uint32_t(event_table - event_vtable));
    for (std::uint32_t i = 0; i < repeats; ++i)
        put32(event_slots + 4 * i, std::uint32_t(event_table - (event_slots + 4 * i)));
    put32(0, std::uint32_t(etdump_table));
    const numgap::error failure = error_from([&] { (void)numgap::io::parse_etdump(bytes, "bomb.etdp"); });
    CHECK(failure.kind() == numgap::error_kind::limit);
    CHECK(contains(failure.what(), "offsets shared many times"));
}


TEST_CASE("etdump: tensor keys beyond 64 times the file's size plus 16 MiB are a limit error naming the file") {
    // One event whose tensor list holds 4096 tensors gives 4096 keys
    // "<name>.<i>", each charged (size + 24) * 3 bytes. A 16 KiB name makes
    // that ~200 MB from a file of ~200 KB, far over its budget
    // (64 * ~200 KB + 16 MiB ~ 29 MB); a one-letter name stays well inside.
    const auto dump_with_name = [](const std::string& name) {
        std::vector<fb::node_pointer> list;
        for (int i = 0; i < 4096; ++i) list.push_back(et::tensor(et::float32, {}, 0));
        return et::file({et::run_data("r", {et::debug_event({name}, et::list_value(std::move(list)))})});
    };
    et::debug_buffer buffer;
    (void)buffer.add(std::vector<float>{1.0f});
    const std::vector<std::byte> bomb = dump_with_name(std::string(16384, 'n'));
    CHECK(bomb.size() < 300000);
    const numgap::error failure = error_from([&] { (void)open_etdump(bomb, buffer.bytes()); });
    CHECK(failure.kind() == numgap::error_kind::limit);
    CHECK(contains(failure.what(), ".etdp': the tensor keys of event 0 would exceed 64 times the file's size"));
    CHECK(contains(failure.where().file, ".etdp"));

    const numgap::io::etdump_tensors fine = open_etdump(dump_with_name("n"), buffer.bytes());
    CHECK(fine.entries().size() == 4096);
}

TEST_CASE("etdump: files flatc writes from a schema of our own are read (skipped without flatc)") {
    // Debian's flatbuffers-compiler lays buffers out back to front and shares
    // vtables, unlike etdump_builder.hpp: an independent writer of the format.
    if (std::system("command -v flatc >/dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: flatc not found (apt-get install flatbuffers-compiler) - ETDump read from flatc output");
        return;
    }
    numgap_test::temp_directory directory;
    // The ETDump tables numgap reads, with our own names and the public schema's field ids.
    directory.write("dump.fbs", R"(namespace numgap_test;
file_identifier "ED00";
table TensorT { scalar_type:byte (id: 0); sizes:[long] (id: 1); strides:[long] (id: 2); offset:long (id: 3); }
table TensorListT { tensors:[TensorT] (id: 0); }
table BoolT { value:bool (id: 0); }
table ValueT { kind:byte (id: 0); tensor:TensorT (id: 1); tensor_list:TensorListT (id: 2);
               unused3:int (id: 3, deprecated); unused4:int (id: 4, deprecated); unused5:int (id: 5, deprecated);
               unused6:int (id: 6, deprecated); output:BoolT (id: 7); }
table DebugEventT { chain:ulong (id: 0); instruction:int = -1 (id: 1); entry:ValueT (id: 2);
                    delegate_int:int = -1 (id: 3); delegate_str:string (id: 4); name:string (id: 5); }
table EventT { unused0:int (id: 0, deprecated); unused1:int (id: 1, deprecated); debug:DebugEventT (id: 2); }
table RunDataT { name:string (id: 0); bundled_input:int = -1 (id: 1); unused2:int (id: 2, deprecated);
                 events:[EventT] (id: 3); }
table DumpT { version:uint (id: 0); runs:[RunDataT] (id: 1); }
root_type DumpT;
)");
    directory.write("dump.json", R"({"version": 0, "runs": [{"name": "forward", "events": [
  {"debug": {"name": "conv", "instruction": 0,
             "entry": {"kind": 5, "tensor": {"scalar_type": 6, "sizes": [2], "offset": 0}}}},
  {"debug": {"delegate_int": 4, "entry": {"kind": 6, "tensor_list": {"tensors": [
      {"scalar_type": 15, "sizes": [2], "offset": 64}, {"scalar_type": 5, "sizes": [1], "offset": 128}]}}}},
  {"debug": {"instruction": 7,
             "entry": {"kind": 5, "output": {"value": true}, "tensor": {"scalar_type": 6, "sizes": [2], "offset": 0}}}}
]}]})");
    et::debug_buffer buffer;
    (void)buffer.add(std::vector<float>{1.5f, -2.0f});
    (void)buffer.add(std::vector<std::uint16_t>{0x3F80, 0xC040}); // bf16 1, -3
    (void)buffer.add(std::vector<std::uint16_t>{0x3800});         // f16 0.5
    const std::string folder = directory.path().string();
    for (const std::string flags : {"", "--size-prefixed "}) {
        CAPTURE(flags);
        const std::string out = folder + (flags.empty() ? "/plain" : "/prefixed");
        REQUIRE(std::system(("flatc -b " + flags + "-o '" + out + "' '" + folder + "/dump.fbs' '" + folder +
                             "/dump.json' >/dev/null 2>&1")
                                .c_str()) == 0);
        const std::vector<std::byte> dump = numgap_test::read_bytes(out + "/dump.bin");
        CHECK(numgap::io::parse_etdump(dump, "flatc.etdp").size_prefixed == !flags.empty());
        const numgap::io::etdump_tensors tensors = open_etdump(dump, buffer.bytes());
        std::vector<std::string> in_order;
        for (const auto& entry : tensors.entries()) in_order.push_back(entry.key);
        CHECK(in_order == std::vector<std::string>{"conv", "delegate_4.0", "delegate_4.1", "instruction_7"});
        CHECK(element<float>(tensors.view(*tensors.find("conv")), 1) == -2.0f);
        CHECK(element<std::uint16_t>(tensors.view(*tensors.find("delegate_4.0")), 1) == 0xC040);
        CHECK(tensors.view(*tensors.find("delegate_4.1")).type() == numgap::dtype::float16);
        CHECK(tensors.nodes()[1].debug_handles == std::vector<std::int64_t>{4});
        CHECK(tensors.entries()[3].event->program_output);
    }
}

} // TEST_SUITE
