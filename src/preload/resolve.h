// Finding the real functions behind our exported names (see resolve.cpp for the search order).
#pragma once

namespace gofl {

// The definition of `name` outside this library that `caller` would be bound to (the global scope,
// else the caller's own dependencies, else any loaded object); nullptr if none.
void* find_real(const char* name, const void* caller);
// find_real, or the dynamic linker's "undefined symbol" message and exit status 127.
void* find_real_or_exit(const char* name, const void* caller);
// fork() handlers: the resolver's lock is held across fork().
void resolve_fork_prepare();
void resolve_fork_parent();
void resolve_fork_child();

}  // namespace gofl
