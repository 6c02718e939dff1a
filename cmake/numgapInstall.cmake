# install() + export so that users can find_package(numgap CONFIG).
include(CMakePackageConfigHelpers)

set(NUMGAP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/numgap"
    CACHE STRING "Where numgap's CMake package files are installed")

install(TARGETS numgap EXPORT numgapTargets)
install(DIRECTORY include/numgap DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT numgapTargets NAMESPACE numgap:: DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")

configure_package_config_file(cmake/numgapConfig.cmake.in
    "${PROJECT_BINARY_DIR}/numgapConfig.cmake"
    INSTALL_DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/numgapConfigVersion.cmake"
    COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/numgapConfig.cmake" "${PROJECT_BINARY_DIR}/numgapConfigVersion.cmake"
    DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")
