# Settings for numgap's own programs (tests, benchmarks, examples). None of
# this reaches users through the exported numgap::numgap target.

# Warnings live on a private target, never on the exported one.
add_library(numgap_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(numgap_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
        -Wno-sign-conversion)
endif()

add_library(numgap_program_options INTERFACE)
target_link_libraries(numgap_program_options INTERFACE numgap numgap_warnings)
if(NUMGAP_SANITIZE)
    target_compile_options(numgap_program_options INTERFACE
        -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(numgap_program_options INTERFACE -fsanitize=address,undefined)
    target_compile_definitions(numgap_program_options INTERFACE NUMGAP_ENABLE_ASSERTS=1)
endif()
if(NUMGAP_NATIVE)
    target_compile_options(numgap_program_options INTERFACE -march=native)
endif()

# Workloads that the tests and the benchmarks share
# (benchmarks/support/numgap_support/: generated graph pairs with a known
# ground truth). They are benchmark workloads first, which the matching tests
# reuse, so benchmarks never include files from tests/; never installed.
add_library(numgap_support INTERFACE)
target_include_directories(numgap_support INTERFACE "${PROJECT_SOURCE_DIR}/benchmarks/support")
