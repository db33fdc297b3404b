// The session layer has no ImGui.
#include <imgui.h>
