# Driven by CTest: install numgap (find_package mode) or point at its source
# (add_subdirectory mode), then configure, build and run the consumer.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run)
    execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE result
        OUTPUT_VARIABLE output ERROR_VARIABLE output)
    if(NOT result EQUAL 0)
        message(FATAL_ERROR "command failed (${result}): ${ARGN}\n${output}")
    endif()
    set(last_output "${output}" PARENT_SCOPE)
endfunction()

set(consumer_args -S "${NUMGAP_SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release -DNUMGAP_EXPECT_DISPATCH=${EXPECT_DISPATCH})
if(MODE STREQUAL "find_package")
    run("${CMAKE_COMMAND}" --install "${NUMGAP_BINARY_DIR}" --prefix "${WORK_DIR}/prefix")
    run("${CMAKE_COMMAND}" ${consumer_args} "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
else()
    run("${CMAKE_COMMAND}" ${consumer_args} "-DNUMGAP_AS_SUBDIRECTORY=${NUMGAP_SOURCE_DIR}")
endif()
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
message(STATUS "consumer (${MODE}) printed:\n${last_output}")
if(NOT last_output MATCHES "cosine")
    message(FATAL_ERROR "the consumer did not print its metrics")
endif()
# With numgap::dispatch the comparison ran through a dispatch unit's kernels.
if(EXPECT_DISPATCH AND NOT last_output MATCHES "kernels: (sse2|fma3\\+avx2|avx512bw|neon64) \\(run-time dispatch\\)")
    message(FATAL_ERROR "the consumer did not run the comparison through numgap::dispatch")
endif()
