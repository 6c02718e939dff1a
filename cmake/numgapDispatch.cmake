# numgap_dispatch (exported as numgap::dispatch): the fused kernels compiled
# once per instruction set, so a portable build still runs AVX-512 code on a
# CPU that has it. Linking it defines NUMGAP_RUNTIME_DISPATCH=1 for the user's
# code (every translation unit of a program must agree on the mode,
# kernels/dispatch/dispatch.hpp), so
#     target_link_libraries(app PRIVATE numgap::dispatch)
# is all a find_package or add_subdirectory user writes. Header-only users
# may instead compile include/numgap/kernels/dispatch/*.cpp themselves with
# the flags below, or rely on their own -march.
set(numgap_dispatch_dir "${PROJECT_SOURCE_DIR}/include/numgap/kernels/dispatch")
set(numgap_dispatch_sources)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    list(APPEND numgap_dispatch_sources
        "${numgap_dispatch_dir}/sse2.cpp" "${numgap_dispatch_dir}/avx2.cpp" "${numgap_dispatch_dir}/avx512bw.cpp")
    set_source_files_properties("${numgap_dispatch_dir}/avx2.cpp" PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    set_source_files_properties("${numgap_dispatch_dir}/avx512bw.cpp" PROPERTIES
        COMPILE_OPTIONS "-mavx512f;-mavx512cd;-mavx512dq;-mavx512bw;-mavx2;-mfma")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    list(APPEND numgap_dispatch_sources "${numgap_dispatch_dir}/neon64.cpp")
endif()

if(numgap_dispatch_sources)
    add_library(numgap_dispatch STATIC ${numgap_dispatch_sources})
    add_library(numgap::dispatch ALIAS numgap_dispatch)
    set_target_properties(numgap_dispatch PROPERTIES EXPORT_NAME dispatch POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(numgap_dispatch PUBLIC numgap)
    target_compile_definitions(numgap_dispatch PUBLIC NUMGAP_RUNTIME_DISPATCH=1)
    # numgap's own builds add their warnings and sanitizers; never exported.
    if(TARGET numgap_program_options)
        target_link_libraries(numgap_dispatch PRIVATE $<BUILD_INTERFACE:numgap_program_options>)
    endif()
    # Optimised even in Debug builds, so debug builds of programs using it
    # still compare at full speed. Safety does not depend on it: the CTest
    # dispatch_odr checks -O0 and -Og too (kernels/README.md).
    # Under NUMGAP_SANITIZE -O1: g++ 12 spent about 400 CPU seconds on the
    # instrumented AVX-512 unit at -O3 (136 at -O1), and every test object
    # waits for this library in the Makefile build.
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        if(NUMGAP_SANITIZE)
            target_compile_options(numgap_dispatch PRIVATE -O1)
        else()
            target_compile_options(numgap_dispatch PRIVATE -O3)
        endif()
    endif()
endif()
