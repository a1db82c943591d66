-- NOW: the server clock (with the test offset), so every process agrees on time.
return now_ms()
