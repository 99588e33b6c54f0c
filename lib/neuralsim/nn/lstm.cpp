// placeholder: the LSTM
