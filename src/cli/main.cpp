#include <stdio.h>
int main() { puts("gpu-offload"); return 0; }
