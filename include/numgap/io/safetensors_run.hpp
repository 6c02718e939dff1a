#pragma once
// numgap::io::safetensors_tensors: the tensors of a run held in safetensors
// files (one file, the *.safetensors files of a run directory, or the shards a
// *.index.json names), keyed by their safetensors keys. run_directory owns one
// and asks it for the keys it holds and for a view of one of them.
//
// Every file is mapped once, when added (lazily paged: nothing but the header
// is read until a tensor is loaded), and stays mapped for the run's lifetime;
// views point into the mapping. Each key is kept as a compact record (48
// bytes; its text and shape in tables shared by all keys), and the header's
// pages are handed back once read: a run of a million keys held 170 bytes a
// key in safetensors_entry form, plus the 70 MB header resident. The same
// key in two files is an error naming both files.
// parse_safetensors_weight_map() reads a sharded set's index ({"metadata":
// ..., "weight_map": {key: file}}); the run resolves its files through
// open_confined, and every key it lists must be in the header of the file it
// names (and only those keys of a shard are the run's tensors).
//
// Order: keys() is sorted by key, as every key list of a run is; neither the
// order of the files nor the order of a header is kept (JSON object order is
// not a promise the format makes). Without graph.json each key is a node of
// its own (run_graph.hpp); a graph.json gives the topological order.
//
// Thread safety: after the files are added, every const member may be called
// from several threads at once. Complexity: add is O(header); find O(1)
// expected (an index of the keys that compares against the records' text),
// O(1) with a position hint (and a few key comparisons when lookups
// follow the file's order); sorted_positions() O(k) for a sorted header,
// else O(k log k).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_header.hpp>

namespace numgap::io {

class safetensors_tensors {
public:
    struct file {
        std::string name; // as the run names it: relative to the run directory, or the path given
        std::shared_ptr<const mapped_file> mapping;
    };
    // Where a key's tensor is and what it is. The views point into the
    // run's own tables: valid while the safetensors_tensors lives, is not
    // moved and no file is added.
    struct location {
        const file* source = nullptr;
        std::string_view key;
        std::string_view dtype_name; // as written ("BF16")
        std::optional<dtype> type;   // empty when numgap cannot compute with dtype_name
        std::span<const std::int64_t> shape;
        std::uint64_t begin = 0, end = 0; // absolute byte offsets in the file

        // The tensor's data in place (safetensors_view's rules and errors).
        tensor_view view() const {
            return detail::safetensors_tensor_view(source->mapping->bytes(), type, dtype_name, shape, begin, end, key,
                                                   source->name);
        }
    };

    // Maps and indexes the file open as `descriptor`; `shown` names it in errors.
    // With `only` non-empty, only those keys become tensors of the run (a shard
    // of a sharded set); each must be in the file's header. A throw leaves
    // the object as it was before the call (strong guarantee).
    void add(std::string name, file_descriptor descriptor, const std::filesystem::path& shown,
             const std::vector<std::string>& only = {}) {
        if (files_.size() >= std::size_t(0xffffffffu))
            throw error(error_kind::limit, "a run of more than 2^32 - 1 safetensors files cannot be indexed",
                        error_location::in_file(name));
        auto added = std::make_unique<file>();
        added->name = std::move(name);
        added->mapping = std::make_shared<const mapped_file>(mapped_file::map(std::move(descriptor), shown));
        const std::size_t first = records_.size();
        const std::size_t keys_before = keys_.size(), dimensions_before = dimensions_.size();
        std::size_t claimed = first; // records [first, claimed) are in the index
        try {
            add_records(*added, shown, only, first, claimed);
            const std::uint64_t bytes = added->mapping->size();
            files_.push_back(std::move(added)); // the last step that can throw
            total_bytes_ += bytes;
        } catch (...) {
            for (std::size_t r = first; r < claimed; ++r) index_.erase(key_of(r), key_equals{this});
            records_.resize(first);
            keys_.resize(keys_before);
            dimensions_.resize(dimensions_before);
            throw;
        }
    }

    // Hands back the room add() kept for more files (its tables grow
    // geometrically across files: up to half of a million-key run's ~100
    // MB); call it once the last file is added.
    void shrink_to_fit() {
        records_.shrink_to_fit();
        keys_.shrink_to_fit();
        dimensions_.shrink_to_fit();
    }

    // Every mapped file's resident pages handed back (run_source::release_cached_pages).
    void release_pages() const noexcept {
        for (const auto& added : files_) added->mapping->release_all_pages();
    }

    std::optional<location> find(std::string_view key) const {
        const std::optional<std::uint32_t> found = position_of(key);
        if (!found) return std::nullopt;
        return at(*found);
    }
    // find(key) that first tries `position` (a tensor_spec's source_slot):
    // one key comparison instead of a hash lookup whose probes miss the cache
    // in a run of a million keys.
    std::optional<location> find(std::string_view key, std::uint32_t position) const {
        if (position < records_.size() && key_of(position) == key) return at(position);
        return find(key);
    }
    // The position of `key`, or nullopt; and the key at `position` (< size()).
    // Lookups mostly walk a file in order (tensors compared in the order
    // they were dumped, one or two threads taking turns), so the few
    // positions after this thread's last hit in this run are tried first:
    // a few key comparisons instead of a hash probe whose cache and TLB
    // misses were a quarter of comparing a million small pairs. A stale
    // hint (another run since at the same address) costs a comparison; the
    // key's equality decides, and keys are unique, so the answer is the index's.
    std::optional<std::uint32_t> position_of(std::string_view key) const {
        recent_hit& recent = recent_hit_of(this);
        for (std::uint32_t step = 1; step <= recent_window; ++step) {
            const std::uint64_t position = std::uint64_t(recent.position) + step;
            if (position < records_.size() && key_of(std::size_t(position)) == key) {
                recent.position = std::uint32_t(position);
                return recent.position;
            }
        }
        const std::uint32_t* found = index_.find(key, key_equals{this});
        if (found == nullptr) return std::nullopt;
        recent.position = *found;
        return *found;
    }
    std::string_view key_at(std::uint32_t position) const noexcept { return key_of(position); }
    location at(std::uint32_t position) const {
        const record& r = records_.at(position);
        const detail::safetensors_dtype& known = detail::safetensors_dtypes[r.dtype];
        return location{files_[r.file].get(),
                        key_of(position),
                        known.name,
                        known.type,
                        std::span<const std::int64_t>(dimensions_.data() + r.shape_offset, r.rank),
                        r.begin,
                        r.end};
    }
    // The position of every key, sorted by key (a run's key lists are
    // sorted). Headers usually list their keys in order already: then
    // checking is enough.
    std::vector<std::uint32_t> sorted_positions() const {
        std::vector<std::uint32_t> sorted(records_.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = std::uint32_t(i);
        const auto by_key = [&](std::uint32_t a, std::uint32_t b) { return key_of(a) < key_of(b); };
        if (!std::is_sorted(sorted.begin(), sorted.end(), by_key)) std::sort(sorted.begin(), sorted.end(), by_key);
        return sorted;
    }
    bool empty() const noexcept { return records_.empty(); }
    std::size_t size() const noexcept { return records_.size(); }
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }

private:
    // A key of the run, 48 bytes: its text and shape live in keys_ and
    // dimensions_, shared by all (a std::string and a std::vector each took
    // 56 bytes and a heap block before any character or dimension).
    struct record {
        std::uint64_t begin, end; // absolute byte offsets in the file
        std::uint64_t key_offset, shape_offset;
        std::uint32_t key_size, rank;
        std::uint32_t file; // into files_
        detail::safetensors_dtype_slot dtype;
    };
    struct key_equals {
        const safetensors_tensors* self;
        bool operator()(std::uint32_t i, std::string_view key) const { return self->key_of(i) == key; }
    };

    std::string_view key_of(std::size_t position) const noexcept {
        const record& r = records_[position];
        return std::string_view(keys_.data() + r.key_offset, r.key_size);
    }
    // Indexes record `position` of the file called `name`; a key already
    // indexed is an error naming both files. Given `added` (its header read
    // unchecked: add_records), the checked reading of that header runs
    // first, so a key it repeats anywhere gives the error it always gave.
    void claim(std::size_t position, const std::string& name, const file* added = nullptr,
               const std::filesystem::path& shown = {}) {
        if (position >= numgap::detail::max_key_positions)
            throw error(error_kind::limit, "a run of more than 2^31 - 1 safetensors keys cannot be indexed",
                        error_location::in_file(name));
        const auto [existing, inserted] = index_.insert(key_of(position), std::uint32_t(position), key_equals{this});
        if (!inserted) {
            const std::string key(key_of(position));
            const std::uint32_t other = records_[*existing].file;
            // A header read unchecked may repeat a key further on: the
            // checked reading would have refused the file before any claim.
            if (added != nullptr) refuse_repeated_key(*added, shown);
            if (other == records_[position].file)
                throw error(error_kind::schema, "safetensors file '" + name + "' lists key '" + key + "' twice",
                            error_location::at_item(name, key));
            const std::string& other_name = other < files_.size() ? files_[other]->name : name;
            throw error(error_kind::schema,
                        "key '" + key + "' is in both safetensors files '" + other_name + "' and '" + name +
                            "'; a run's keys must be unique",
                        error_location::at_item(name, key));
        }
    }

    // Reads `added`'s header again with the duplicate check, which throws
    // where its first repeated key is (or an earlier error of the header).
    static void refuse_repeated_key(const file& added, const std::filesystem::path& shown) {
        detail::read_safetensors_header(
            added.mapping->bytes(), shown.string(), [](std::size_t) {}, [](const std::string&, const std::string&) {},
            [](const detail::safetensors_entry_read&) {});
    }

    // add()'s work on the file `added` (its number is files_.size(), not yet
    // pushed): its records from `first` on, claimed into the index up to `claimed`.
    void add_records(const file& added, const std::filesystem::path& shown, const std::vector<std::string>& only,
                     std::size_t first, std::size_t& claimed) {
        const std::uint32_t file_number = std::uint32_t(files_.size());
        // Without `only` every key goes into the index, which finds a key the
        // header repeats: the header is read without a duplicate check of its
        // own. Whatever fails, the checked reading runs first, so the error
        // is the one it would have given (a repeated key before a later fault).
        const bool index_checks_keys = only.empty();
        std::uint64_t data_start = 0;
        try {
            data_start = detail::read_safetensors_header(
                added.mapping->bytes(), shown.string(),
                [&](std::size_t expected) {
                    // Grown geometrically across files: a run of many shards is not copied once per shard.
                    if (first + expected > records_.capacity())
                        records_.reserve(std::max(first + expected, 2 * records_.capacity()));
                },
                [](const std::string&, const std::string&) {}, // a run keeps no metadata
                [&](const detail::safetensors_entry_read& read) {
                    records_.push_back(record{read.begin, read.end, keys_.size(), dimensions_.size(),
                                              std::uint32_t(read.key.size()), std::uint32_t(read.shape.size()),
                                              file_number, read.dtype});
                    keys_.append(read.key);
                    dimensions_.insert(dimensions_.end(), read.shape.begin(), read.shape.end());
                },
                !index_checks_keys);
            detail::check_safetensors_tiling(
                records_.size() - first,
                [&](std::size_t i) { return std::pair(records_[first + i].begin, records_[first + i].end); },
                [&](std::size_t i) { return key_of(first + i); }, shown.string(), data_start, added.mapping->size());
        } catch (const error&) {
            if (index_checks_keys) refuse_repeated_key(added, shown);
            throw;
        }
        added.mapping->check_intact();
        // Every key and shape is copied out: the header's pages (70 MB for a
        // million keys) need not stay in this process's memory (a second
        // reading for an error maps them in again).
        added.mapping->release_pages(0, data_start);
        if (index_checks_keys) {
            index_.reserve(records_.size());
            for (; claimed < records_.size(); ++claimed) claim(claimed, added.name, &added, shown);
            return;
        }
        // Only the listed keys stay, in the order listed; the file's own keys
        // are indexed once to find them (a shard may hold a great many).
        std::vector<record> kept;
        kept.reserve(only.size());
        {
            const std::size_t in_file_count = std::min(records_.size() - first, numgap::detail::max_key_positions);
            numgap::detail::positional_key_index in_file([&](std::size_t i) { return key_of(first + i); },
                                                         in_file_count);
            for (std::size_t i = 0; i < in_file_count; ++i) in_file.insert(key_of(first + i), i);
            for (const std::string& key : only) {
                const std::optional<std::uint32_t> found = in_file.find(key);
                if (!found)
                    throw error(error_kind::schema,
                                "the weight map names key '" + key + "' in '" + added.name +
                                    "', but that file's header has no such key",
                                error_location::at_item(added.name, key));
                kept.push_back(records_[first + *found]);
            }
        }
        // The unlisted keys' text and shapes stay behind in keys_ and dimensions_, unused.
        records_.resize(first);
        records_.insert(records_.end(), kept.begin(), kept.end());
        for (; claimed < records_.size(); ++claimed) claim(claimed, added.name);
    }

    // position_of's hint: per thread, the last position found in each of
    // the last few runs looked in (a thread compares two runs at a time).
    struct recent_hit {
        const safetensors_tensors* table = nullptr;
        std::uint32_t position = 0xffffffffu; // none yet: every try is past the end
    };
    static constexpr std::uint32_t recent_window = 4;
    static recent_hit& recent_hit_of(const safetensors_tensors* table) noexcept {
        static thread_local recent_hit hits[4];
        static thread_local unsigned next = 0;
        for (recent_hit& hit : hits)
            if (hit.table == table) return hit;
        recent_hit& taken = hits[next++ % 4];
        taken = recent_hit{table};
        return taken;
    }

    std::vector<std::unique_ptr<const file>> files_; // in the order added; a location points at one
    std::vector<record> records_;                    // by position (a spec's source_slot)
    std::string keys_;                               // every key's text, back to back
    std::vector<std::int64_t> dimensions_;           // every shape, back to back
    numgap::detail::key_index index_;                // key -> position; compares against keys_
    std::uint64_t total_bytes_ = 0;
};

// The "weight_map" of a sharded set's index file: key -> file name, grouped by
// file (in order of first appearance) as file -> keys.
inline std::vector<std::pair<std::string, std::vector<std::string>>>
parse_safetensors_weight_map(std::string_view text, const std::string& file_name) {
    const json_value index = parse_json(text, file_name);
    const json_value* weight_map = index.find("weight_map");
    if (!index.is_object() || weight_map == nullptr || !weight_map->is_object())
        throw error(error_kind::schema,
                    "'" + file_name + "' is not a safetensors index: it has no \"weight_map\" object",
                    error_location::at_item(file_name, "weight_map"));
    std::vector<std::pair<std::string, std::vector<std::string>>> shards;
    std::map<std::string, std::size_t> shard_of_file;
    for (const json_member& member : weight_map->as_object()) {
        if (!member.value.is_string())
            throw error(error_kind::schema,
                        "'" + file_name + "': weight_map key '" + member.key + "' does not name a file (a string)",
                        error_location::at_line(file_name, std::uint32_t(member.value.line()),
                                                std::uint32_t(member.value.column()), member.key));
        const auto [found, inserted] = shard_of_file.try_emplace(member.value.as_string(), shards.size());
        if (inserted) shards.emplace_back(member.value.as_string(), std::vector<std::string>{});
        shards[found->second].second.push_back(member.key);
    }
    return shards;
}

} // namespace numgap::io
