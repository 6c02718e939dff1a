#pragma once
// Test support: FlatBuffers written byte by byte from the format description
// (flatbuffer.hpp), and ETDump files from ExecuTorch's public schema
// (etdump.hpp lists the fields and ids). The builder lays a tree out front to
// back: each table's vtable just before it, children after their parent (so
// every uoffset points forward, as the format requires), objects 8-aligned and
// scalar fields aligned to their width. Hostile files are made by patching
// the bytes of a well-formed one.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace numgap_test::flatbuffers {

struct node;
using node_pointer = std::shared_ptr<const node>;

// A table field: inline scalar bytes, or a reference to another node.
struct field {
    int id = 0;
    std::vector<std::byte> scalar; // little-endian bytes, when not a reference
    node_pointer reference;
};

struct node {
    enum class kind { table, table_vector, scalar_vector, string } what = kind::table;
    std::vector<field> fields;         // table
    std::vector<node_pointer> tables;  // table_vector
    std::vector<std::byte> elements;   // scalar_vector (little-endian), string (the characters)
    std::uint32_t element_size = 1;    // scalar_vector
};

template <class T> std::vector<std::byte> little_endian(T value) {
    std::vector<std::byte> bytes(sizeof(T));
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = std::byte((bits >> (8 * i)) & 0xff);
    return bytes;
}

template <class T> field scalar(int id, T value) { return field{id, little_endian(value), nullptr}; }
inline field reference(int id, node_pointer target) { return field{id, {}, std::move(target)}; }

inline node_pointer table(std::vector<field> fields) {
    auto made = std::make_shared<node>();
    made->fields = std::move(fields);
    return made;
}
inline node_pointer table_vector(std::vector<node_pointer> tables) {
    auto made = std::make_shared<node>();
    made->what = node::kind::table_vector;
    made->tables = std::move(tables);
    return made;
}
template <class T> node_pointer scalar_vector(const std::vector<T>& values) {
    auto made = std::make_shared<node>();
    made->what = node::kind::scalar_vector;
    made->element_size = sizeof(T);
    for (T value : values)
        for (std::byte b : little_endian(value)) made->elements.push_back(b);
    return made;
}
inline node_pointer string(const std::string& text) {
    auto made = std::make_shared<node>();
    made->what = node::kind::string;
    for (char c : text) made->elements.push_back(std::byte(static_cast<unsigned char>(c)));
    return made;
}

class builder {
public:
    // The whole buffer: root uoffset, identifier, then the tree; with
    // size_prefixed, preceded by the u32 size of all that.
    static std::vector<std::byte> finish(const node_pointer& root, const std::string& identifier, bool size_prefixed) {
        builder b;
        b.out_.resize(8);
        for (std::size_t i = 0; i < 4 && i < identifier.size(); ++i) b.out_[4 + i] = std::byte(identifier[i]);
        b.patch(0, b.write(*root));
        if (!size_prefixed) return b.out_;
        std::vector<std::byte> prefixed = little_endian(std::uint32_t(b.out_.size()));
        prefixed.insert(prefixed.end(), b.out_.begin(), b.out_.end());
        return prefixed;
    }

private:
    void align(std::size_t to) {
        while (out_.size() % to != 0) out_.push_back(std::byte{0});
    }
    void put(const std::vector<std::byte>& bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
    // Stores at `at` the uoffset from `at` to `target`.
    void patch(std::size_t at, std::size_t target) {
        const std::vector<std::byte> bytes = little_endian(std::uint32_t(target - at));
        std::memcpy(out_.data() + at, bytes.data(), 4);
    }

    std::size_t write(const node& n) {
        switch (n.what) {
        case node::kind::string:
        case node::kind::scalar_vector: {
            align(8);
            const std::size_t at = out_.size();
            put(little_endian(std::uint32_t(n.elements.size() / n.element_size)));
            put(n.elements);
            if (n.what == node::kind::string) out_.push_back(std::byte{0});
            return at;
        }
        case node::kind::table_vector: {
            align(8);
            const std::size_t at = out_.size();
            put(little_endian(std::uint32_t(n.tables.size())));
            const std::size_t slots = out_.size();
            out_.resize(out_.size() + 4 * n.tables.size());
            for (std::size_t i = 0; i < n.tables.size(); ++i) patch(slots + 4 * i, write(*n.tables[i]));
            return at;
        }
        case node::kind::table: break;
        }
        // Inline layout: soffset, then each field aligned to its width.
        int max_id = -1;
        for (const field& f : n.fields) max_id = std::max(max_id, f.id);
        std::vector<std::uint16_t> offsets(std::size_t(max_id + 1), 0);
        std::size_t size = 4;
        std::vector<std::size_t> placed;
        for (const field& f : n.fields) {
            const std::size_t width = f.reference ? 4 : f.scalar.size();
            while (size % width != 0) ++size;
            placed.push_back(size);
            offsets[std::size_t(f.id)] = std::uint16_t(size);
            size += width;
        }
        // vtable: 4 + 2 per field id, then padding so that the table is 8-aligned.
        align(8);
        const std::size_t vtable_size = 4 + 2 * offsets.size();
        const std::size_t vtable = out_.size() + ((8 - (vtable_size % 8)) % 8);
        out_.resize(vtable);
        put(little_endian(std::uint16_t(vtable_size)));
        put(little_endian(std::uint16_t(size)));
        for (std::uint16_t offset : offsets) put(little_endian(offset));
        const std::size_t at = out_.size();
        put(little_endian(std::int32_t(at - vtable)));
        out_.resize(at + size);
        for (std::size_t i = 0; i < n.fields.size(); ++i)
            if (!n.fields[i].reference)
                std::memcpy(out_.data() + at + placed[i], n.fields[i].scalar.data(), n.fields[i].scalar.size());
        for (std::size_t i = 0; i < n.fields.size(); ++i)
            if (n.fields[i].reference) patch(at + placed[i], write(*n.fields[i].reference));
        return at;
    }

    std::vector<std::byte> out_;
};

} // namespace numgap_test::flatbuffers

namespace numgap_test::etdump {

namespace fb = numgap_test::flatbuffers;

// ExecuTorch ScalarType numbers used by the tests.
enum scalar : std::int8_t { uint8 = 0, int8 = 1, int16 = 2, int32 = 3, int64 = 4, half = 5, float32 = 6,
                            float64 = 7, boolean = 11, bfloat16 = 15, uint16 = 27 };

inline fb::node_pointer tensor(std::int8_t scalar_type, const std::vector<std::int64_t>& sizes, std::int64_t offset,
                               const std::vector<std::int64_t>& strides = {}) {
    std::vector<fb::field> fields{fb::scalar(0, scalar_type), fb::reference(1, fb::scalar_vector(sizes)),
                                  fb::scalar(3, offset)};
    if (!strides.empty()) fields.push_back(fb::reference(2, fb::scalar_vector(strides)));
    return fb::table(std::move(fields));
}

// Value tables: one tensor, a tensor list, or an Int (no tensor).
inline fb::node_pointer tensor_value(fb::node_pointer held, bool program_output = false) {
    std::vector<fb::field> fields{fb::scalar(0, std::int8_t(5)), fb::reference(1, std::move(held))};
    if (program_output) fields.push_back(fb::reference(7, fb::table({fb::scalar(0, std::uint8_t(1))})));
    return fb::table(std::move(fields));
}
inline fb::node_pointer list_value(std::vector<fb::node_pointer> tensors) {
    return fb::table({fb::scalar(0, std::int8_t(6)),
                      fb::reference(2, fb::table({fb::reference(0, fb::table_vector(std::move(tensors)))}))});
}
inline fb::node_pointer int_value(std::int64_t value) {
    return fb::table({fb::scalar(0, std::int8_t(1)), fb::reference(3, fb::table({fb::scalar(0, value)}))});
}

struct event_ids {
    std::string name = {}, delegate_str = {};
    std::int32_t delegate_int = -1, instruction = -1;
};

// An Event holding a DebugEvent.
inline fb::node_pointer debug_event(const event_ids& ids, fb::node_pointer value) {
    std::vector<fb::field> fields{fb::scalar(0, std::uint64_t(0)), fb::reference(2, std::move(value))};
    if (ids.instruction != -1) fields.push_back(fb::scalar(1, ids.instruction));
    if (ids.delegate_int != -1) fields.push_back(fb::scalar(3, ids.delegate_int));
    if (!ids.delegate_str.empty()) fields.push_back(fb::reference(4, fb::string(ids.delegate_str)));
    if (!ids.name.empty()) fields.push_back(fb::reference(5, fb::string(ids.name)));
    return fb::table({fb::reference(2, fb::table(std::move(fields)))});
}
// An Event holding a ProfileEvent (skipped by the reader).
inline fb::node_pointer profile_event(const std::string& name) {
    return fb::table({fb::reference(0, fb::table({fb::reference(0, fb::string(name)), fb::scalar(6, std::uint64_t(7))}))});
}

inline fb::node_pointer run_data(const std::string& name, std::vector<fb::node_pointer> events) {
    return fb::table({fb::reference(0, fb::string(name)), fb::reference(3, fb::table_vector(std::move(events)))});
}

inline std::vector<std::byte> file(std::vector<fb::node_pointer> runs, bool size_prefixed = true,
                                   const std::string& identifier = "ED00") {
    const fb::node_pointer root = fb::table({fb::scalar(0, std::uint32_t(0)), fb::reference(1, fb::table_vector(std::move(runs)))});
    return fb::builder::finish(root, identifier, size_prefixed);
}

// A debug buffer: each tensor's bytes appended at a 64-byte boundary (as the
// runtime's buffer data sink aligns them); returns the offset written.
class debug_buffer {
public:
    template <class T> std::int64_t add(const std::vector<T>& values) {
        while (bytes_.size() % 64 != 0) bytes_.push_back(std::byte{0});
        const std::int64_t at = std::int64_t(bytes_.size());
        bytes_.resize(bytes_.size() + values.size() * sizeof(T));
        if (!values.empty()) std::memcpy(bytes_.data() + at, values.data(), values.size() * sizeof(T));
        return at;
    }
    const std::vector<std::byte>& bytes() const { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

} // namespace numgap_test::etdump
