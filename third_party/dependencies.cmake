# CMake glue for the Debian packages that third_party/install-deps.sh installs.
# Each dependency becomes one imported target named hs::<name>; no source is copied.

find_package(Eigen3 3.4 REQUIRED NO_MODULE)             # libeigen3-dev
find_package(nlohmann_json 3.10 REQUIRED)               # nlohmann-json3-dev
find_package(CLI11 2.1 REQUIRED)                        # libcli11-dev
find_package(PkgConfig REQUIRED)
if(HEADSCOPE_OPENMP)
    find_package(OpenMP REQUIRED)                       # g++'s libgomp; clang's from libomp-dev
endif()
if(HEADSCOPE_OPENBLAS)
    # libopenblas-pthread-dev, Debian's default OpenBLAS (PyTorch's too). core/gemm.cpp
    # sets it to one thread of its own, since core/parallel.h cuts the work between
    # threads itself; its threaded build is the one that may be called from several
    # threads at once (the single-threaded build races on its buffers).
    set(openblas_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
    find_library(HEADSCOPE_OPENBLAS_LIBRARY NAMES openblas PATHS ${openblas_dir} NO_DEFAULT_PATH)
    find_path(HEADSCOPE_OPENBLAS_INCLUDE cblas.h PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
              NO_DEFAULT_PATH)
    if(NOT HEADSCOPE_OPENBLAS_LIBRARY OR NOT HEADSCOPE_OPENBLAS_INCLUDE)
        message(FATAL_ERROR "OpenBLAS not found in ${openblas_dir}: run third_party/install-deps.sh "
                            "(libopenblas-pthread-dev), or configure with -DHEADSCOPE_OPENBLAS=OFF")
    endif()
    add_library(hs_openblas INTERFACE)
    target_link_libraries(hs_openblas INTERFACE ${HEADSCOPE_OPENBLAS_LIBRARY})
    target_include_directories(hs_openblas SYSTEM INTERFACE ${HEADSCOPE_OPENBLAS_INCLUDE})
    # Its soname, libopenblas.so.0, is also the other variants'; the run path makes the
    # programs load this one whichever the system's default is.
    target_link_options(hs_openblas INTERFACE "LINKER:-rpath,${openblas_dir}")
    add_library(hs::openblas ALIAS hs_openblas)
endif()
pkg_check_modules(STB REQUIRED IMPORTED_TARGET stb)     # libstb-dev (stb_image, stb_image_write)
add_library(hs::stb ALIAS PkgConfig::STB)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)   # libutf8proc-dev (Unicode classes)
add_library(hs::utf8proc ALIAS PkgConfig::UTF8PROC)

if(HEADSCOPE_BUILD_GUI)
    set(OpenGL_GL_PREFERENCE GLVND)
    find_package(OpenGL REQUIRED)                       # libgl-dev
    find_package(glfw3 3.3 REQUIRED)                    # libglfw3-dev
    # libimgui-dev 1.86 ships the GLFW and OpenGL3 backends inside libimgui.a.
    pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)
    add_library(hs_imgui INTERFACE)
    target_link_libraries(hs_imgui INTERFACE PkgConfig::IMGUI glfw OpenGL::GL ${CMAKE_DL_LIBS})
    add_library(hs::imgui ALIAS hs_imgui)
endif()

if(HEADSCOPE_BUILD_TESTS)
    find_package(doctest 2.4 REQUIRED)                  # doctest-dev
endif()
