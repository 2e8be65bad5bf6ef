/* loom shim of the vendor header ap_int.h: loom_hls.h implements the types for plain g++. */
#include "loom_hls.h"
