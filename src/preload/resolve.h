// Finding the real functions behind our exported names (see resolve.cpp for the search order).
#pragma once

namespace gofl {

// The first definition of `name` outside this library, searched from `caller`'s module; nullptr if none.
void* find_real(const char* name, const void* caller);
// find_real, or the dynamic linker's "undefined symbol" message and exit status 127.
void* find_real_or_exit(const char* name, const void* caller);

}  // namespace gofl
