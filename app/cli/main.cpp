#include <cstdio>
int main() { std::puts("tessera-cli: not written yet"); return 0; }
