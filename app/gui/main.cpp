// headscope: the desktop app (run_window.cpp); a test build adds its own modes
// (tests/gui/harness).

#include "app/gui/harness_modes.h"

int main(int argc, char** argv) { return headscope::gui::run_window(argc, argv, nullptr); }
