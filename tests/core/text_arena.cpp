// Pins down detail::text_arena and text_list: texts (empty, long, with NUL
// bytes) come back as stored; a list is a random-access range, so
// std::prev(end()) (the last output key) works; truncate drops what was
// stored after a point.
#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/text_arena.hpp>

static_assert(std::random_access_iterator<numgap::detail::text_list::iterator>);

TEST_SUITE("core") {
TEST_CASE("text_arena: texts and lists of texts come back as stored") {
    numgap::detail::text_arena arena;
    const std::vector<std::string> texts = {"", "a", std::string(1000, 'x'), std::string("n\0ul", 4), "last"};
    std::vector<numgap::detail::text_ref> refs;
    for (const std::string& text : texts) refs.push_back(arena.store(text, "limit"));
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(arena[refs[i]] == texts[i]);

    const numgap::detail::text_list list = arena.list(refs);
    REQUIRE(list.size() == texts.size());
    CHECK(list.back() == "last");
    CHECK(*std::prev(list.end()) == "last");
    CHECK(list.end() - list.begin() == std::ptrdiff_t(texts.size()));
    CHECK(list.begin()[2] == texts[2]);
    std::size_t i = 0;
    for (const std::string_view text : list) CHECK(text == texts[i++]);
    CHECK(arena.list({}).empty());

    // A text viewing the arena itself is copied right, though growing moves it.
    for (int round = 0; round < 20; ++round) {
        const numgap::detail::text_ref copy = arena.store(arena[refs[2]], "limit");
        CHECK(arena[copy] == texts[2]);
        CHECK(arena[refs[2]] == texts[2]);
    }

    const std::size_t before = arena.size();
    arena.store("dropped", "limit");
    arena.truncate(before);
    CHECK(arena.size() == before);
    CHECK(arena[arena.store("kept", "limit")] == "kept");
}

TEST_CASE("text_arena: store_shared reuses an equal text stored lately, never a stale one") {
    numgap::detail::text_arena arena;
    const numgap::detail::text_ref first = arena.store_shared("layers.0.norm", "limit");
    const numgap::detail::text_ref again = arena.store_shared("layers.0.norm", "limit");
    CHECK(again.offset == first.offset);
    CHECK(arena.size() == 13);
    CHECK(arena.store_shared("", "limit").size == 0);
    // Taken back by truncate, then other text of the same length in its place.
    arena.truncate(0);
    const numgap::detail::text_ref other = arena.store_shared("layers.1.norm", "limit");
    CHECK(arena[other] == "layers.1.norm");
    CHECK(arena[arena.store_shared("layers.0.norm", "limit")] == "layers.0.norm");
    // A moved-from arena holds no text: what it remembers is not used.
    numgap::detail::text_arena moved = std::move(arena);
    const numgap::detail::text_ref fresh =
        arena.store_shared("layers.1.norm", "limit"); // NOLINT(bugprone-use-after-move)
    CHECK(arena[fresh] == "layers.1.norm");
    CHECK(moved[other] == "layers.1.norm");
}
} // TEST_SUITE("core")
