// The command-line program has no window.
#include "ui/views/view.h"
