#pragma once
// A token as axes, tooltips and exported pictures show it: a space as a middle dot, a
// line end as ↵ and a tab as →, so a token of spaces is not blank.

#include <string>

namespace headscope {

std::string visible_token(const std::string& token);

}   // namespace headscope
