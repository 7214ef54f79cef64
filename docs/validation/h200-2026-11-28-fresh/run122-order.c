#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){int n=atoi(argv[1]);int shuffle=atoi(argv[2]);const char*path=argv[3];
size_t C=1<<20;char*buf=aligned_alloc(4096,C);memset(buf,0xa5,C);
int*ord=malloc(n*sizeof(int));for(int i=0;i<n;i++)ord[i]=i;
if(shuffle){srand(1);for(int i=n-1;i>0;i--){int j=rand()%(i+1);int t=ord[i];ord[i]=ord[j];ord[j]=t;}}
unlink(path);int fd=open(path,O_CREAT|O_RDWR,0644);ftruncate(fd,(off_t)n*C);
double t0=now();for(int i=0;i<n;i++){if(pwrite(fd,buf,C,(off_t)ord[i]*C)!=(ssize_t)C){perror("pwrite");return 1;}}
double t=now()-t0;printf("%s: %.2f GB/s\n",shuffle?"shuffled":"in order",n*(double)C/t/1e9);close(fd);unlink(path);return 0;}
