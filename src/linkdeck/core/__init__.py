"""The data every layer passes around, the words that judge, counter arithmetic."""
