"""lockfiles"""
