// Pins down what the umbrella header brings into a user's translation unit:
// the library, not the tool. Process spawning (Graphviz for --svg) lives in
// examples/numgap/render_svg.hpp; if <spawn.h> ever comes back through
// numgap.hpp this file stops compiling with a sentence saying why.
// numgap.hpp comes first, so nothing else here can have pulled <spawn.h> in.
#include <numgap/numgap.hpp>

#if defined(_SPAWN_H) || defined(POSIX_SPAWN_RESETIDS) || defined(POSIX_SPAWN_SETSIGMASK)
#error "numgap/numgap.hpp includes <spawn.h>: process spawning belongs to the command-line tool, not the library."
#define NUMGAP_UMBRELLA_INCLUDES_SPAWN 1
#else
#define NUMGAP_UMBRELLA_INCLUDES_SPAWN 0
#endif

#include <doctest/doctest.h>

TEST_SUITE("numgap") {

TEST_CASE("the umbrella header includes no process spawning") {
    CHECK(NUMGAP_UMBRELLA_INCLUDES_SPAWN == 0);
}

} // TEST_SUITE
