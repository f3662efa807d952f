#pragma once
// Where Tessera keeps what it can make again (tuning results, calibrated CPU figures, compiled modules).
#include <string>

namespace tessera {

// $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera (else a folder in the temp dir).
std::string defaultCacheDir();

}  // namespace tessera
