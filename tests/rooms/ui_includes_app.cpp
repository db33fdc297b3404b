// ui/ sits below the programs.
#include "app/gui/options.h"
