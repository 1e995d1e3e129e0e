/* stb_impl.c: the single place where stb_image_write (Debian's libstb-dev)
 * is compiled. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"
