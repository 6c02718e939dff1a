#pragma once
// numgap::io::safetensors_tensors: the tensors of a run held in safetensors
// files (one file, the *.safetensors files of a run directory, or the shards a
// *.index.json names), keyed by their safetensors keys. run_directory owns one
// and asks it for the keys it holds and for a view of one of them.
//
// Every file is mapped once, when added (lazily paged: nothing but the header
// is read until a tensor is loaded), and stays mapped for the run's lifetime;
// views point into the mapping. The same key in two files is an error naming
// both files. parse_safetensors_weight_map() reads a sharded set's index
// ({"metadata": ..., "weight_map": {key: file}}); the run resolves its files
// through open_confined, and every key it lists must be in the header of the
// file it names (and only those keys of a shard are the run's tensors).
//
// Order: keys() is sorted by key, as every key list of a run is; neither the
// order of the files nor the order of a header is kept (JSON object order is
// not a promise the format makes). Without graph.json each key is a node of
// its own (run_graph.hpp); a graph.json gives the topological order.
//
// Thread safety: after the files are added, every const member may be called
// from several threads at once. Complexity: add is O(header); find O(1)
// expected (an index of the keys, which are not copied), O(1) with a
// position hint; sorted_positions() O(k) for a sorted header, else O(k log k).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
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

namespace numgap::io {

class safetensors_tensors {
public:
    struct file {
        std::string name; // as the run names it: relative to the run directory, or the path given
        std::shared_ptr<const mapped_file> mapping;
        safetensors_index index;
    };
    struct location {
        std::shared_ptr<const file> source;
        const safetensors_entry* entry = nullptr;
    };

    // Maps and indexes the file open as `descriptor`; `shown` names it in errors.
    // With `only` non-empty, only those keys become tensors of the run (a shard
    // of a sharded set); each must be in the file's header.
    void add(std::string name, file_descriptor descriptor, const std::filesystem::path& shown,
             const std::vector<std::string>& only = {}) {
        auto added = std::make_shared<file>();
        added->name = std::move(name);
        added->mapping = std::make_shared<const mapped_file>(mapped_file::map(std::move(descriptor), shown));
        added->index = parse_safetensors_header(added->mapping->bytes(), shown.string());
        added->mapping->check_intact();
        const auto claim = [&](const safetensors_entry& entry) {
            if (locations_.size() >= numgap::detail::max_key_positions)
                throw error(error_kind::limit, "a run of more than 2^31 - 1 safetensors keys cannot be indexed",
                            error_location::in_file(added->name));
            const auto [existing, inserted] =
                index_.insert(entry.key, std::uint32_t(locations_.size()), key_equals{&locations_});
            if (!inserted)
                throw error(error_kind::schema,
                            "key '" + entry.key + "' is in both safetensors files '" +
                                locations_[*existing].source->name + "' and '" + added->name +
                                "'; a run's keys must be unique",
                            error_location::at_item(added->name, entry.key));
            locations_.push_back(location{added, &entry});
        };
        if (only.empty()) {
            index_.reserve(locations_.size() + added->index.entries.size());
            for (const safetensors_entry& entry : added->index.entries) claim(entry);
        } else {
            // The file's own keys, indexed once: a shard may hold a great many.
            const std::vector<safetensors_entry>& entries = added->index.entries;
            numgap::detail::positional_key_index in_file(
                [&](std::size_t i) -> const std::string& { return entries[i].key; }, entries.size());
            for (std::size_t i = 0; i < entries.size() && i < numgap::detail::max_key_positions; ++i)
                in_file.insert(entries[i].key, i);
            for (const std::string& key : only) {
                const std::optional<std::uint32_t> entry = in_file.find(key);
                if (!entry)
                    throw error(error_kind::schema,
                                "the weight map names key '" + key + "' in '" + added->name +
                                    "', but that file's header has no such key",
                                error_location::at_item(added->name, key));
                claim(entries[*entry]);
            }
        }
        total_bytes_ += added->mapping->size();
    }

    const location* find(std::string_view key) const {
        const std::uint32_t* found = index_.find(key, key_equals{&locations_});
        return found == nullptr ? nullptr : &locations_[*found];
    }
    // find(key) that first tries `position` (a tensor_spec's source_slot):
    // one key comparison instead of a hash lookup whose probes miss the cache
    // in a run of a million keys.
    const location* find(std::string_view key, std::uint32_t position) const {
        if (position < locations_.size() && locations_[position].entry->key == key) return &locations_[position];
        return find(key);
    }
    const location& at(std::uint32_t position) const { return locations_.at(position); }
    // The position of every location, sorted by key (a run's key lists are
    // sorted). Headers usually list their keys in order already: then
    // checking is enough.
    std::vector<std::uint32_t> sorted_positions() const {
        std::vector<std::uint32_t> sorted(locations_.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = std::uint32_t(i);
        const auto by_key = [&](std::uint32_t a, std::uint32_t b) {
            return locations_[a].entry->key < locations_[b].entry->key;
        };
        if (!std::is_sorted(sorted.begin(), sorted.end(), by_key)) std::sort(sorted.begin(), sorted.end(), by_key);
        return sorted;
    }
    bool empty() const noexcept { return locations_.empty(); }
    std::size_t size() const noexcept { return locations_.size(); }
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }

private:
    struct key_equals {
        const std::deque<location>* locations;
        bool operator()(std::uint32_t i, std::string_view key) const { return (*locations)[i].entry->key == key; }
    };

    // In the order added; a deque, so a location found stays put when more
    // files are added. The index compares against the entries' own keys.
    std::deque<location> locations_;
    numgap::detail::key_index index_;
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
