# CMake glue for the Debian packages that third_party/install-deps.sh installs.
# Each dependency becomes one imported target named hs::<name>; no source is copied.

find_package(Eigen3 3.4 REQUIRED NO_MODULE)             # libeigen3-dev
find_package(nlohmann_json 3.10 REQUIRED)               # nlohmann-json3-dev
find_package(CLI11 2.1 REQUIRED)                        # libcli11-dev
find_package(PkgConfig REQUIRED)
if(HEADSCOPE_OPENMP)
    find_package(OpenMP REQUIRED)                       # g++'s libgomp; clang's from libomp-dev
endif()
pkg_check_modules(STB REQUIRED IMPORTED_TARGET stb)     # libstb-dev (stb_image, stb_image_write)
add_library(hs::stb ALIAS PkgConfig::STB)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)   # libturbojpeg0-dev (JPEG, as Pillow decodes it)
add_library(hs::turbojpeg ALIAS PkgConfig::TURBOJPEG)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)   # libutf8proc-dev (Unicode classes)
add_library(hs::utf8proc ALIAS PkgConfig::UTF8PROC)
# libonig-dev: tokenizer.json's regexes, by the engine Hugging Face uses. Its header is
# compiled against; the library is loaded at run time (core/text/tokenizer/onig_regex.cpp).
pkg_check_modules(ONIG REQUIRED oniguruma)
# libsentencepiece-dev: spiece.model files (SigLIP's tokenizer), read by Google's own library.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
add_library(hs::sentencepiece ALIAS PkgConfig::SENTENCEPIECE)

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
