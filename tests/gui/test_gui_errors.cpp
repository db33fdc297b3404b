// docs/errors.md, run: every row for the window (`headscope ...`) shows the catalogue's
// line. With --screenshot the app prints what its banner shows and exits 2.

#include "error_catalogue.h"

using namespace headscope::test;

TEST_CASE("docs/errors.md: every headscope (window) case shows the catalogue's message") {
    int checked = 0;
    std::string catalogue(HEADSCOPE_SOURCE_DIR);
    catalogue.append("/docs/errors.md");   // appended: GCC 12 mis-warns (-Warray-bounds) on + here
    for (const auto& row : read_catalogue(catalogue)) {
        if (!is_gui_row(row)) continue;
        check_catalogue_row(row);
        ++checked;
    }
    CHECK(checked >= 5);
}
