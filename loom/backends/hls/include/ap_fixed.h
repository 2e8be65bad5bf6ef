/* loom shim of the vendor header ap_fixed.h: loom_hls.h implements the types for plain g++. */
#include "loom_hls.h"
