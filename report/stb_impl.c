/* stb_impl.c: the single place where the stb implementations (Debian's
 * libstb-dev) are compiled: stb_image_write for the PNGs, stb_truetype for
 * their text. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"
#define STB_TRUETYPE_IMPLEMENTATION
#include "stb_truetype.h"
