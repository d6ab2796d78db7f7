"""The human views: each returns what to print (Rich ``Text``, tables, lines); the printer prints it."""
