// placeholder: filled by the train layer's implementation
