"""install"""
