// A room sees its own headers and those below it (the control case: this compiles).
#include "core/base/error.h"
#include "core/nn/mask.h"
