#pragma once
// numgap::detail::text_arena: many short texts (node names, tensor keys) in
// one character array, each named by an 8-byte text_ref (offset and size)
// instead of a std::string of 32 bytes plus a heap block past 15
// characters. graph.json's node table and a report's rows keep their texts
// this way; text_list views a span of refs as a range of string_view.
// Views stay valid until the arena next grows.
// Limit: 4 GiB of text in all; past it numgap::error (error_kind::limit)
// with the caller's message.
// Complexity: store O(text) amortised; views O(1). Throws: as above;
// std::bad_alloc.
#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <ranges>
#include <span>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>

namespace numgap::detail {

// Where a text lives in a text_arena.
struct text_ref {
    std::uint32_t offset = 0, size = 0;
};

// A list of texts: a range of std::string_view with size() and []
// (hand-written: clang 14 cannot use libstdc++'s transform_view).
class text_list {
public:
    // Random access, so that std::prev(end()) and the like work.
    class iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = std::string_view;
        using difference_type = std::ptrdiff_t;
        using reference = std::string_view;
        using pointer = void;
        iterator() = default;
        iterator(const text_ref* at, const char* chars) : at_(at), chars_(chars) {}
        std::string_view operator*() const noexcept { return {chars_ + at_->offset, at_->size}; }
        std::string_view operator[](difference_type n) const noexcept { return *(*this + n); }
        iterator& operator++() noexcept { return *this += 1; }
        iterator& operator--() noexcept { return *this -= 1; }
        iterator operator++(int) noexcept {
            iterator before = *this;
            ++at_;
            return before;
        }
        iterator operator--(int) noexcept {
            iterator before = *this;
            --at_;
            return before;
        }
        iterator& operator+=(difference_type n) noexcept {
            at_ += n;
            return *this;
        }
        iterator& operator-=(difference_type n) noexcept {
            at_ -= n;
            return *this;
        }
        friend iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
        friend iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
        friend iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
        friend difference_type operator-(const iterator& a, const iterator& b) noexcept { return a.at_ - b.at_; }
        bool operator==(const iterator& other) const noexcept { return at_ == other.at_; }
        auto operator<=>(const iterator& other) const noexcept { return at_ <=> other.at_; }

    private:
        const text_ref* at_ = nullptr;
        const char* chars_ = nullptr;
    };

    text_list(std::span<const text_ref> refs, const char* chars) : refs_(refs), chars_(chars) {}
    std::size_t size() const noexcept { return refs_.size(); }
    bool empty() const noexcept { return refs_.empty(); }
    std::string_view operator[](std::size_t i) const noexcept { return {chars_ + refs_[i].offset, refs_[i].size}; }
    std::string_view back() const noexcept { return (*this)[refs_.size() - 1]; }
    iterator begin() const noexcept { return {refs_.data(), chars_}; }
    iterator end() const noexcept { return {refs_.data() + refs_.size(), chars_}; }

private:
    std::span<const text_ref> refs_;
    const char* chars_;
};

class text_arena {
public:
    // Stores `text` (which may view this arena: basic_graph::add_node(
    // g.node_name(i)) is a copy of a name); `limit_message` is the error's
    // message past 4 GiB.
    text_ref store(std::string_view text, const char* limit_message) {
        const std::size_t size = chars_.size();
        if (text.size() > max_chars - size) throw error(error_kind::limit, limit_message);
        const text_ref ref{std::uint32_t(size), std::uint32_t(text.size())};
        const std::less_equal<const char*> at_or_before;
        if (!text.empty() && at_or_before(chars_.data(), text.data()) &&
            std::less<const char*>()(text.data(), chars_.data() + size)) {
            const std::size_t from = std::size_t(text.data() - chars_.data()); // growing moves what it views
            chars_.resize(size + text.size());
            std::copy_n(chars_.data() + from, text.size(), chars_.data() + size);
        } else {
            chars_.insert(chars_.end(), text.begin(), text.end());
        }
        return ref;
    }
    // store(), or an equal text stored lately (256 kept, by hash): a
    // graph.json input is mostly the name of a node just before, a row's
    // tensor key its node's name, unmatched rows share a message. An entry
    // is used only while it lies inside the arena and holds this text, so
    // truncate() and a move leave nothing stale to trust.
    text_ref store_shared(std::string_view text, const char* limit_message) {
        if (text.empty()) return {};
        text_ref& recent = recent_[std::hash<std::string_view>{}(text) % recent_.size()];
        if (recent.size == text.size() && std::size_t(recent.offset) + recent.size <= chars_.size() &&
            (*this)[recent] == text)
            return recent;
        recent = store(text, limit_message);
        return recent;
    }
    std::string_view operator[](text_ref ref) const noexcept { return {chars_.data() + ref.offset, ref.size}; }
    text_list list(std::span<const text_ref> refs) const noexcept { return text_list(refs, chars_.data()); }

    std::size_t size() const noexcept { return chars_.size(); }
    void reserve(std::size_t chars) { chars_.reserve(chars); }
    // Drops the texts stored from `chars` on (a roll-back).
    void truncate(std::size_t chars) noexcept { chars_.resize(chars); }

private:
    static constexpr std::size_t max_chars = 0xffffffffu;
    // A vector, not a std::string: assigning an empty arena to a std::string
    // keeps its block (libstdc++ copies a short string into the old buffer),
    // and clear() by assignment must hand the memory back.
    std::vector<char> chars_;
    std::array<text_ref, 256> recent_{}; // store_shared's texts stored lately, by hash
};

} // namespace numgap::detail

// A text_list views the arena's text: its iterators outlive the list object.
template <>
inline constexpr bool std::ranges::enable_borrowed_range<numgap::detail::text_list> = true;
