#include "core/render/visible_token.h"

namespace headscope {

std::string visible_token(const std::string& token) {
    std::string shown;
    shown.reserve(token.size());
    for (const char c : token) {
        if (c == ' ') {
            shown += "\u00b7";
        } else if (c == '\n') {
            shown += "\u21b5";
        } else if (c == '\t') {
            shown += "\u2192";
        } else {
            shown += c;
        }
    }
    return shown;
}

}   // namespace headscope
