"""What a summary is made of: its format, the transcript a summarizer reads, the offline one."""
