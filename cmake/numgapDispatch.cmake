# numgap_dispatch: a small internal static library holding the fused kernels
# compiled once per architecture, so a portable build still runs AVX-512 code
# on a CPU that has it. Header-only users do the same by compiling these files
# themselves, or rely on their own -march flags instead.
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
    target_link_libraries(numgap_dispatch PUBLIC numgap_program_options)
    # Every translation unit of a program must agree on the mode (kernels/dispatch.hpp).
    target_compile_definitions(numgap_dispatch PUBLIC NUMGAP_RUNTIME_DISPATCH=1)
    # Optimised even in Debug builds: inline library functions instantiated here
    # with AVX-512 enabled must not be the copies the linker keeps for baseline code.
    target_compile_options(numgap_dispatch PRIVATE -O3)
endif()
