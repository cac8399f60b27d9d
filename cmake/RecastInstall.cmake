# `cmake --install <build> --prefix <dir>`: headers, libraries, tools, the
# Python package and a CMake package config (lib/cmake/recast), so another
# project does find_package(recast). examples/embed is such a project;
# test/Embed builds it against an installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(NOT DEFINED RECAST_VERSION)
  set(RECAST_VERSION 0.1.0)
endif()

# Headers, the generated .inc files with them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/recast
                  ${PROJECT_SOURCE_DIR}/include/recast-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT recast-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td" PATTERN "*.def")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/recast
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT recast-headers
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)

# The C++ libraries, for compilers that build recast's pipelines from C++
# (recast::RecastTransforms, recast::RecastConversion, ...): static archives
# on the same libMLIR.so as the rest. A program links either these or
# libRecastCAPI.so, which holds them already, not both.
set(RECAST_CXX_LIBRARIES
  RecastSupport RecastRuntimeSupport RecastRuntime RecastRemat RecastMemoryPlan
  RecastUtils RecastDialect RecastInterfaces RecastAnalysis RecastTransforms
  RecastConversion RecastExecution)
foreach(library ${RECAST_CXX_LIBRARIES})
  target_include_directories(${library} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS ${RECAST_CXX_LIBRARIES}
  EXPORT recastTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT recast-libraries
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The C API library and the tools.
install(TARGETS RecastCAPI
  EXPORT recastTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT recast-capi
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(tool recast-opt recast-run recast-solve)
  if(TARGET ${tool})
    # libMLIR.so and libLLVM.so stay where Debian installs them.
    set_property(TARGET ${tool} APPEND PROPERTY INSTALL_RPATH
      "${LLVM_LIBRARY_DIR}")
    install(TARGETS ${tool}
      EXPORT recastTargets
      RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT recast-tools)
  endif()
endforeach()

get_property(RECAST_USES_CBC GLOBAL PROPERTY RECAST_USES_CBC)
if(NOT RECAST_USES_CBC)
  set(RECAST_USES_CBC OFF)
endif()
set(RECAST_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/recast)
install(EXPORT recastTargets
  NAMESPACE recast::
  DESTINATION ${RECAST_CMAKE_PACKAGE_DIR}
  COMPONENT recast-cmake)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/recastConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/recastConfig.cmake
  INSTALL_DESTINATION ${RECAST_CMAKE_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/recastConfigVersion.cmake
  VERSION ${RECAST_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/recastConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/recastConfigVersion.cmake
  DESTINATION ${RECAST_CMAKE_PACKAGE_DIR}
  COMPONENT recast-cmake)
