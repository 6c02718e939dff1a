// Pins down detail::key_index against std::unordered_map as the model:
// inserts, lookups and erases in random order over few distinct keys (so
// every path is taken: present, absent, backward shifts across wrapped probe
// chains, growth), keys that differ only in their last byte, the empty key,
// and payload updates through the returned pointer.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/core/key_index.hpp>

namespace key_index_test {
// Keys live in `store`; a payload is an index into it.
struct keyed_store {
    std::vector<std::string> store;
    bool operator()(std::uint32_t payload, std::string_view key) const { return store[payload] == key; }
};
} // namespace key_index_test

TEST_SUITE("core") {
TEST_CASE("key_index: agrees with unordered_map over random inserts, finds and erases") {
    for (const std::size_t distinct : {1u, 7u, 100u, 5000u}) {
        CAPTURE(distinct);
        std::mt19937 generator{unsigned(distinct)};
        key_index_test::keyed_store keys;
        numgap::detail::key_index index;
        std::unordered_map<std::string, std::uint32_t> model;
        for (int step = 0; step < 60000; ++step) {
            const std::string key = "key" + std::to_string(generator() % distinct);
            switch (generator() % 3) {
            case 0: {
                keys.store.push_back(key);
                const auto payload = std::uint32_t(keys.store.size() - 1);
                const auto [stored, inserted] = index.insert(key, payload, keys);
                const auto [expected, model_inserted] = model.emplace(key, payload);
                REQUIRE(inserted == model_inserted);
                REQUIRE(*stored == expected->second);
                break;
            }
            case 1: REQUIRE(index.erase(key, keys) == (model.erase(key) == 1)); break;
            default: {
                const std::uint32_t* found = index.find(key, keys);
                const auto expected = model.find(key);
                REQUIRE((found == nullptr) == (expected == model.end()));
                if (found != nullptr) REQUIRE(*found == expected->second);
            }
            }
            REQUIRE(index.size() == model.size());
        }
        for (const auto& [key, payload] : model) REQUIRE(*index.find(key, keys) == payload);
    }
}

TEST_CASE("key_index: near keys, the empty key, payload updates and clear") {
    key_index_test::keyed_store keys{{"", "ab", "ac", "abc", "a"}};
    numgap::detail::key_index index(3); // grows past its reservation
    for (std::uint32_t i = 0; i < keys.store.size(); ++i) CHECK(index.insert(keys.store[i], i, keys).second);
    for (std::uint32_t i = 0; i < keys.store.size(); ++i) CHECK(*index.find(keys.store[i], keys) == i);
    CHECK(index.find("b", keys) == nullptr);
    CHECK(index.find("abcd", keys) == nullptr);
    // The returned payload may be changed in place (basic_graph flags shared names so).
    *index.insert("ab", 99, keys).first |= 0x80000000u;
    const std::uint32_t* flagged = index.find(
        "ab", [&](std::uint32_t payload, std::string_view key) { return keys.store[payload & 0x7fffffffu] == key; });
    REQUIRE(flagged != nullptr);
    CHECK(*flagged == (1u | 0x80000000u));
    index.clear();
    CHECK(index.empty());
    CHECK(index.find("", keys) == nullptr);
    CHECK(index.insert("a", 4, keys).second);
}

TEST_CASE("key_index: every key colliding in its hash still resolves by comparison") {
    // A comparison that never matches makes each insert a new entry, as keys
    // whose 32-bit hashes collide would: the chain grows, nothing is lost.
    numgap::detail::key_index index;
    const auto never_equal = [](std::uint32_t, std::string_view) { return false; };
    for (std::uint32_t i = 0; i < 1000; ++i) CHECK(index.insert("same", i, never_equal).second);
    CHECK(index.size() == 1000);
    std::uint32_t seen = 0;
    const auto count_until = [&](std::uint32_t payload, std::string_view) { return ++seen, payload == 500; };
    REQUIRE(index.find("same", count_until) != nullptr);
    CHECK(seen <= 1000);
}

TEST_CASE("positional_key_index: positions in the caller's sequence, the first of equal keys kept") {
    // The sequence grows after the index is made (as a reader appends what
    // it reads); the index reads keys through key_at at lookup time.
    std::vector<std::string> names;
    numgap::detail::positional_key_index index([&](std::size_t i) -> const std::string& { return names[i]; });
    const auto add = [&](const std::string& name) {
        const auto [position, inserted] = index.insert(name, names.size());
        if (inserted) names.push_back(name);
        return std::pair(position, inserted);
    };
    for (int i = 0; i < 3000; ++i) CHECK(add("n" + std::to_string(i)) == std::pair(std::uint32_t(i), true));
    CHECK(add("n17") == std::pair(std::uint32_t(17), false));
    CHECK(add("") == std::pair(std::uint32_t(3000), true));
    CHECK(add("") == std::pair(std::uint32_t(3000), false));
    CHECK(index.size() == 3001);
    CHECK(names.size() == 3001);
    CHECK(index.find("n2999") == std::uint32_t(2999));
    CHECK(index.find("n3000") == std::nullopt);
    CHECK(index.find("n") == std::nullopt);
}
} // TEST_SUITE("core")
