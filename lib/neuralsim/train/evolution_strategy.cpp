// placeholder: the evolution strategy (policy search baseline)
