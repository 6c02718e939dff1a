#pragma once
// numgap::io::parse_etdump: the debug events of an ExecuTorch ETDump file
// that carry tensors, read with the bounds-checked flatbuffer_reader.
//
// Format (ExecuTorch's public schema, devtools/etdump/etdump_schema_flatcc.fbs,
// file identifier "ED00"; only the fields read here are listed, with their
// field ids):
//   ETDump      { 0 version:uint, 1 run_data:[RunData] }          (root)
//   RunData     { 0 name:string, 1 bundled_input_index:int = -1, 3 events:[Event] }
//   Event       { 2 debug_event:DebugEvent }  (profile and allocation events are skipped)
//   DebugEvent  { 0 chain_index:ulong, 1 instruction_id:int = -1, 2 debug_entry:Value,
//                 3 delegate_debug_id_int:int = -1, 4 delegate_debug_id_str:string, 5 name:string }
//   Value       { 0 val:byte (0 Null, 1 Int, 2 Bool, 3 Float, 4 Double, 5 Tensor,
//                 6 TensorList, 7 String), 1 tensor:Tensor, 2 tensor_list:TensorList, 7 output:Bool }
//   TensorList  { 0 tensors:[Tensor] }
//   Tensor      { 0 scalar_type:byte, 1 sizes:[long], 2 strides:[long], 3 offset:long }
//   Bool        { 0 bool_val:bool }
// The ExecuTorch runtime writes the file *size-prefixed*: a u32 byte count of
// the flatbuffer that follows, then the flatbuffer (root uoffset, then "ED00").
// flatc writes it without the prefix unless asked (--size-prefixed); both are
// read: "ED00" at bytes 8..12 means size-prefixed, at bytes 4..8 plain. The
// prefix must not exceed the file (trailing bytes after it are ignored, as
// alignment padding). A tensor's data lives in the separate debug buffer at
// Tensor.offset (etdump_run.hpp); an empty tensor may have offset -1.
//
// Read: every debug event whose Value is a Tensor or a TensorList (in event
// order, per run); events carrying scalars (Int, Bool, Float, Double, String,
// Null) are counted but carry no tensor. Program outputs (Value.output true)
// are marked.
//
// Refused (numgap::error naming the file, the byte offset and the item, kind
// format unless said): a file without the identifier; a size prefix larger
// than the file; every out-of-bounds offset, vector or string (flatbuffer.hpp);
// a Value of type Tensor without its tensor (or TensorList without its list);
// a negative size or stride; strides whose count differs from the sizes';
// a rank above numgap's max_rank (kind limit). Amplification is bounded (kind
// limit): uoffsets may make many events share one table or list, so the
// events and tensors visited may not exceed (file size / 4) and the bytes of
// names and dimensions copied may not exceed the file size - limits no file
// the runtime writes comes near (each of its events and tensors takes more
// than 8 bytes of its own, and it never shares strings).
//
// The scalar type is kept as written; etdump_scalar_types maps ExecuTorch's
// numbering (c10's) to numgap dtypes and sizes. Complexity: O(file).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/byte_signature.hpp>
#include <numgap/io/flatbuffer.hpp>
#include <numgap/io/little_endian.hpp>

namespace numgap::io {

inline constexpr std::string_view etdump_file_identifier = "ED00";

struct etdump_tensor {
    std::int8_t scalar_type = 0; // ExecuTorch's ScalarType, as written
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides; // in elements; empty when not written (row-major)
    std::int64_t offset = -1;          // in the debug buffer
    std::uint64_t file_offset = 0;     // of the Tensor table, for messages
};

struct etdump_debug_event {
    std::size_t event_index = 0;   // position in RunData.events (all event kinds counted)
    std::uint64_t file_offset = 0; // of the DebugEvent table, for messages
    std::string name, delegate_debug_id_str;
    std::int32_t instruction_id = -1, delegate_debug_id_int = -1;
    std::uint64_t chain_index = 0;
    bool tensor_list = false;    // the Value was a TensorList (even of one tensor)
    bool program_output = false; // Value.output
    std::vector<etdump_tensor> tensors;
};

struct etdump_run_data {
    std::string name;
    std::int32_t bundled_input_index = -1;
    std::size_t event_count = 0;                    // every event, of any kind
    std::vector<etdump_debug_event> tensor_events; // debug events carrying tensors, in order
};

struct etdump_contents {
    std::uint32_t version = 0;
    bool size_prefixed = false;
    std::vector<etdump_run_data> runs;
};

// ExecuTorch's ScalarType numbers (c10's): name, element size in bytes (0:
// not a whole-byte type) and the numgap dtype, when numgap computes with it.
struct etdump_scalar_type {
    int code;
    std::string_view name;
    int bytes;
    std::optional<dtype> type;
};
inline constexpr etdump_scalar_type etdump_scalar_types[] = {
    {0, "Byte", 1, dtype::uint8},     {1, "Char", 1, dtype::int8},          {2, "Short", 2, dtype::int16},
    {3, "Int", 4, dtype::int32},      {4, "Long", 8, std::nullopt},         {5, "Half", 2, dtype::float16},
    {6, "Float", 4, dtype::float32},  {7, "Double", 8, dtype::float64},     {8, "ComplexHalf", 4, std::nullopt},
    {9, "ComplexFloat", 8, std::nullopt}, {10, "ComplexDouble", 16, std::nullopt}, {11, "Bool", 1, dtype::boolean},
    {12, "QInt8", 1, std::nullopt},   {13, "QUInt8", 1, std::nullopt},      {14, "QInt32", 4, std::nullopt},
    {15, "BFloat16", 2, dtype::bfloat16}, {16, "QUInt4x2", 0, std::nullopt}, {17, "QUInt2x4", 0, std::nullopt},
    {18, "Bits1x8", 1, std::nullopt}, {19, "Bits2x4", 1, std::nullopt},     {20, "Bits4x2", 1, std::nullopt},
    {21, "Bits8", 1, std::nullopt},   {22, "Bits16", 2, std::nullopt},      {23, "Float8_e5m2", 1, dtype::float8_e5m2},
    {24, "Float8_e4m3fn", 1, dtype::float8_e4m3fn}, {25, "Float8_e5m2fnuz", 1, std::nullopt},
    {26, "Float8_e4m3fnuz", 1, std::nullopt}, {27, "UInt16", 2, dtype::uint16}, {28, "UInt32", 4, std::nullopt},
    {29, "UInt64", 8, std::nullopt},
};

inline const etdump_scalar_type* find_etdump_scalar_type(int code) noexcept {
    for (const etdump_scalar_type& known : etdump_scalar_types)
        if (known.code == code) return &known;
    return nullptr;
}

// True when `bytes` starts like an ETDump: the identifier after a size prefix
// and root offset (bytes 8..12), or after a root offset alone (bytes 4..8).
inline bool has_etdump_signature(std::span<const std::byte> bytes) noexcept {
    return detail::has_bytes_at(bytes, 8, etdump_file_identifier) || detail::has_bytes_at(bytes, 4, etdump_file_identifier);
}

namespace detail {

// Counts what a parse visits and copies, against limits proportional to the file.
class etdump_budget {
public:
    explicit etdump_budget(const flatbuffer_reader& reader)
        : reader_(reader), visits_left_(reader.bytes().size() / 4 + 16), bytes_left_(reader.bytes().size() + 64) {}

    void visit(std::uint32_t position, std::string_view what) {
        if (visits_left_ == 0)
            reader_.fail(error_kind::limit, position, what,
                         "the file refers to more events and tensors than it could hold (offsets shared many times)");
        --visits_left_;
    }
    void copy(std::uint64_t bytes, std::uint32_t position, std::string_view what) {
        if (bytes > bytes_left_)
            reader_.fail(error_kind::limit, position, what,
                         "the names and dimensions read exceed the file's size (offsets shared many times)");
        bytes_left_ -= bytes;
    }

private:
    const flatbuffer_reader& reader_;
    std::uint64_t visits_left_, bytes_left_;
};

inline std::vector<std::int64_t> etdump_dimensions(const flatbuffer_reader& reader, const flatbuffer_vector& values,
                                                   std::uint32_t position, std::string_view what,
                                                   etdump_budget& budget) {
    if (values.size() > std::uint32_t(max_rank))
        reader.fail(error_kind::limit, position, what,
                    "rank " + std::to_string(values.size()) + " is above numgap's maximum rank " +
                        std::to_string(max_rank));
    budget.copy(std::uint64_t(values.size()) * 8, position, what);
    std::vector<std::int64_t> out(values.size());
    for (std::uint32_t i = 0; i < values.size(); ++i) {
        out[i] = values.signed_at(i);
        if (out[i] < 0)
            reader.fail(error_kind::format, values.position_of(i), what,
                        "dimension " + std::to_string(i) + " is negative (" + std::to_string(out[i]) + ")");
    }
    return out;
}

inline etdump_tensor read_etdump_tensor(const flatbuffer_reader& reader, const flatbuffer_table& table,
                                        etdump_budget& budget) {
    budget.visit(table.position(), "Tensor");
    etdump_tensor tensor;
    tensor.file_offset = reader.file_offset() + table.position();
    tensor.scalar_type = std::int8_t(table.signed_field(0, 1, 0, "Tensor.scalar_type"));
    if (const auto sizes = table.vector_field(1, 8, "Tensor.sizes"))
        tensor.sizes = etdump_dimensions(reader, *sizes, table.position(), "Tensor.sizes", budget);
    if (const auto strides = table.vector_field(2, 8, "Tensor.strides")) {
        tensor.strides = etdump_dimensions(reader, *strides, table.position(), "Tensor.strides", budget);
        if (!tensor.strides.empty() && tensor.strides.size() != tensor.sizes.size())
            reader.fail(error_kind::format, table.position(), "Tensor.strides",
                        std::to_string(tensor.strides.size()) + " strides for " + std::to_string(tensor.sizes.size()) +
                            " sizes");
    }
    tensor.offset = table.signed_field(3, 8, 0, "Tensor.offset");
    return tensor;
}

inline std::string etdump_copy(std::string_view text, std::uint32_t position, std::string_view what,
                               etdump_budget& budget) {
    budget.copy(text.size(), position, what);
    return std::string(text);
}

// The debug event's fields and its tensors; false when it carries no tensor.
inline bool read_etdump_debug_event(const flatbuffer_reader& reader, const flatbuffer_table& event,
                                    etdump_debug_event& out, etdump_budget& budget) {
    enum value_type : std::int64_t { tensor_type = 5, tensor_list_type = 6 };
    const std::optional<flatbuffer_table> value = event.table_field(2, "DebugEvent.debug_entry");
    if (!value) return false;
    const std::int64_t type = value->signed_field(0, 1, 0, "Value.val");
    if (type != tensor_type && type != tensor_list_type) return false;
    out.file_offset = reader.file_offset() + event.position();
    out.chain_index = event.unsigned_field(0, 8, 0, "DebugEvent.chain_index");
    out.instruction_id = std::int32_t(event.signed_field(1, 4, -1, "DebugEvent.instruction_id"));
    out.delegate_debug_id_int = std::int32_t(event.signed_field(3, 4, -1, "DebugEvent.delegate_debug_id_int"));
    if (const auto text = event.string_field(4, "DebugEvent.delegate_debug_id_str"))
        out.delegate_debug_id_str = etdump_copy(*text, event.position(), "DebugEvent.delegate_debug_id_str", budget);
    if (const auto text = event.string_field(5, "DebugEvent.name"))
        out.name = etdump_copy(*text, event.position(), "DebugEvent.name", budget);
    if (const auto output = value->table_field(7, "Value.output"))
        out.program_output = output->unsigned_field(0, 1, 0, "Bool.bool_val") != 0;
    if (type == tensor_type) {
        const std::optional<flatbuffer_table> tensor = value->table_field(1, "Value.tensor");
        if (!tensor) reader.fail(error_kind::format, value->position(), "Value", "its type is Tensor but it has no tensor");
        out.tensors.push_back(read_etdump_tensor(reader, *tensor, budget));
        return true;
    }
    out.tensor_list = true;
    const std::optional<flatbuffer_table> list = value->table_field(2, "Value.tensor_list");
    if (!list)
        reader.fail(error_kind::format, value->position(), "Value", "its type is TensorList but it has no tensor list");
    if (const auto tensors = list->vector_field(0, 4, "TensorList.tensors")) {
        for (std::uint32_t i = 0; i < tensors->size(); ++i)
            out.tensors.push_back(read_etdump_tensor(
                reader, reader.table_at_reference(tensors->position_of(i), "TensorList.tensors element"), budget));
    }
    return true;
}

} // namespace detail

// Parses the whole ETDump file `bytes`; `file` names it in errors.
inline etdump_contents parse_etdump(std::span<const std::byte> bytes, const std::string& file) {
    etdump_contents contents;
    const auto fail_file = [&](std::uint64_t offset, const std::string& reason) {
        throw error(error_kind::format, "ETDump file '" + file + "' at byte offset " + std::to_string(offset) + ": " + reason,
                    error_location::at_offset(file, offset));
    };
    if (!has_etdump_signature(bytes))
        fail_file(0, "no ETDump file identifier \"ED00\" at byte 8 (size-prefixed, as the runtime writes it) "
                     "nor at byte 4 (" + std::to_string(bytes.size()) + " bytes in all)");
    contents.size_prefixed = detail::has_bytes_at(bytes, 8, etdump_file_identifier);
    std::span<const std::byte> buffer = bytes;
    std::uint64_t file_offset = 0;
    if (contents.size_prefixed) {
        const std::uint64_t declared = detail::read_little_endian(bytes.data(), 4);
        if (declared > bytes.size() - 4)
            fail_file(0, "is truncated: its size prefix declares " + std::to_string(declared) +
                             " bytes but only " + std::to_string(bytes.size() - 4) + " follow it");
        buffer = bytes.subspan(4, std::size_t(declared));
        file_offset = 4;
    }
    const flatbuffer_reader reader(buffer, file, file_offset);
    detail::etdump_budget budget(reader);
    const flatbuffer_table root = reader.root("ETDump root table");
    contents.version = std::uint32_t(root.unsigned_field(0, 4, 0, "ETDump.version"));
    const std::optional<flatbuffer_vector> runs = root.vector_field(1, 4, "ETDump.run_data");
    if (!runs) return contents;
    for (std::uint32_t r = 0; r < runs->size(); ++r) {
        const flatbuffer_table run = reader.table_at_reference(runs->position_of(r), "RunData");
        budget.visit(run.position(), "RunData");
        etdump_run_data& data = contents.runs.emplace_back();
        if (const auto name = run.string_field(0, "RunData.name"))
            data.name = detail::etdump_copy(*name, run.position(), "RunData.name", budget);
        data.bundled_input_index = std::int32_t(run.signed_field(1, 4, -1, "RunData.bundled_input_index"));
        const std::optional<flatbuffer_vector> events = run.vector_field(3, 4, "RunData.events");
        if (!events) continue;
        data.event_count = events->size();
        for (std::uint32_t e = 0; e < events->size(); ++e) {
            const flatbuffer_table event = reader.table_at_reference(events->position_of(e), "Event");
            budget.visit(event.position(), "Event");
            const std::optional<flatbuffer_table> debug = event.table_field(2, "Event.debug_event");
            if (!debug) continue;
            etdump_debug_event parsed;
            parsed.event_index = e;
            try {
                if (detail::read_etdump_debug_event(reader, *debug, parsed, budget))
                    data.tensor_events.push_back(std::move(parsed));
            } catch (const error& failure) {
                throw error(failure.kind(), std::string(failure.what()) + " (run " + std::to_string(r) + ", event " +
                                                std::to_string(e) + ")",
                            failure.where());
            }
        }
    }
    return contents;
}

} // namespace numgap::io
