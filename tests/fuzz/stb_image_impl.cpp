// stb_image's implementation, compiled into fuzz_image_stb only. Debian's libstb.so is
// built without sanitizers or coverage, so fuzz_image sees neither inside the decoder;
// linked into the executable, these definitions take the place of the shared library's.
// The header is the one libstb.so was built from (/usr/include/stb, the same package),
// so the code fuzzed is the code the app runs.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
