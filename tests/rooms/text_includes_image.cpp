// core/text and core/image are siblings: neither sees the other.
#include "core/image/image.h"
