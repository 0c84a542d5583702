"""MinerU's output as quotes: MinerU 4 run in process (`mineru`), or MinerU 2.x/3.x content-list
files written before (`content_list`)."""
