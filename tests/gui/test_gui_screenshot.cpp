// The desktop app under xvfb-run: it opens a window, computes the default sentence,
// renders, and writes a screenshot that shows heatmaps and the causal mask.

#include "core/colormap.h"
#include "test_support.h"

#include <stb_image.h>

#include <cstdlib>
#include <sys/wait.h>

using headscope::test::TempDir;

namespace {

struct Screenshot {
    int exit_code = -1;
    std::string err;
    int width = 0;
    int height = 0;
    std::vector<unsigned char> rgb;

    // Pixels exactly of colour c.
    long count(headscope::Rgba8 c) const {
        long n = 0;
        for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) n += rgb[i] == c.r && rgb[i + 1] == c.g && rgb[i + 2] == c.b;
        return n;
    }
};

Screenshot take_screenshot(const std::string& args) {
    TempDir dir;
    const std::string png = dir.file("shot.png");
    const std::string command = "xvfb-run -a -s '-screen 0 1280x800x24' '" HEADSCOPE_GUI "' --screenshot '" + png +
                                "' " + args + " 2>'" + dir.file("err") + "' </dev/null";
    const int status = std::system(command.c_str());
    Screenshot shot;
    shot.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    shot.err = headscope::test::read_bytes(dir.file("err"));
    int channels = 0;
    if (unsigned char* pixels = stbi_load(png.c_str(), &shot.width, &shot.height, &channels, 3)) {
        shot.rgb.assign(pixels, pixels + static_cast<std::size_t>(shot.width) * static_cast<std::size_t>(shot.height) * 3);
        stbi_image_free(pixels);
    }
    return shot;
}

} // namespace

TEST_CASE("gui: the default sentence renders heatmaps, and the causal mask shows as masked cells") {
    const Screenshot open = take_screenshot("");
    INFO("stderr: " << open.err);
    REQUIRE(open.exit_code == 0);
    CHECK(open.width == 1280);
    CHECK(open.height == 800);
    const long masked_open = open.count(headscope::masked_colour);

    const Screenshot causal = take_screenshot("--causal --head 1");
    REQUIRE(causal.exit_code == 0);
    // 12 words: 66 of the 144 cells are above the diagonal, each drawn 40+ px square in
    // the large view and a few px in every thumbnail.
    CHECK(causal.count(headscope::masked_colour) > masked_open + 66 * 40 * 40);
    // Weights are drawn through the colour map: its darkest and some mid colours appear.
    long coloured = 0;
    for (float t : {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}) coloured += causal.count(headscope::colormap_lookup(headscope::Colormap::viridis, t));
    CHECK(coloured > 0);
}

TEST_CASE("gui: an empty sentence is reported, not shown as data") {
    const Screenshot shot = take_screenshot("--text ''");
    CHECK(shot.exit_code == 2);
    CHECK(shot.err.find("empty") != std::string::npos);
    CHECK(shot.width == 1280);   // the window still rendered, with the message in it
}
