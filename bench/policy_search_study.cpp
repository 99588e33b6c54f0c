// placeholder: the policy-search study
int main() { return 0; }
