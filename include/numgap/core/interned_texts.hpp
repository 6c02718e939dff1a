#pragma once
// numgap::detail::interned_texts: a table of distinct texts, each stored
// once and named by its position; position 0 is the empty text. Graphs and
// graph.json's node table keep an op type per node this way: a million
// nodes have a few dozen op types, and a string each would cost 32 bytes
// (more past 15 characters).
// Complexity: intern O(text) expected (core/key_index.hpp, which stores no
// copy of the texts). Throws numgap::error (error_kind::limit) past 2^31 - 1
// distinct texts, naming the text; std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>

namespace numgap::detail {

class interned_texts {
public:
    // The position of `text`, added if new; `limit_message` is the error's
    // message past the limit.
    std::uint32_t intern(std::string_view text, const char* limit_message) {
        if (text.empty()) return 0;
        if (const std::uint32_t* known = index_.find(text, equals{this})) return *known;
        if (texts_.size() + 1 >= max_key_positions)
            throw error(error_kind::limit, limit_message, error_location::of_item(std::string(text)));
        // The text is stored first: the index must never hold a position the
        // table lacks. `text` may view a string of the table itself, which the
        // growth can move: the index reads the copy.
        texts_.emplace_back(text);
        try {
            return *index_.insert(texts_.back(), std::uint32_t(texts_.size()), equals{this}).first;
        } catch (...) {
            texts_.pop_back();
            throw;
        }
    }

    std::string_view operator[](std::uint32_t position) const noexcept {
        return position == 0 ? std::string_view() : std::string_view(texts_[position - 1]);
    }

private:
    struct equals {
        const interned_texts* table;
        bool operator()(std::uint32_t payload, std::string_view text) const { return (*table)[payload] == text; }
    };

    // Position p > 0 is texts_[p - 1]: a table holds no block until a text
    // is added (a cleared node table allocates nothing).
    std::vector<std::string> texts_;
    key_index index_;
};

} // namespace numgap::detail
