/* loom shim of the vendor header hls_stream.h: loom_hls.h implements the types for plain g++. */
#include "loom_hls.h"
